// SPDX-License-Identifier: GPL-2.0-or-later

/// An incremental parser for `text/event-stream`: feed bytes as they arrive, get whole events.
/// Lines end in LF, CRLF or CR (even when split between reads); lines starting with ":" are
/// comments; several `data:` lines join with "\n"; a blank line ends an event.
public struct SSEParser: Sendable {
    public struct Event: Sendable, Equatable {
        public var event: String?
        public var data: String
        public init(event: String? = nil, data: String) {
            self.event = event
            self.data = data
        }
    }

    private var line: [UInt8] = []
    private var dataLines: [String] = []
    private var eventName: String?
    private var lastWasCR = false
    /// A line longer than this is garbage, not SSE: cut there, so memory stays bounded; an event's
    /// data stops growing at 4 × this.
    private let maxLine: Int

    public init(maxLine: Int = 1 << 20) {
        self.maxLine = maxLine
    }

    public mutating func feed(_ bytes: some Sequence<UInt8>) -> [Event] {
        var events: [Event] = []
        for byte in bytes {
            if byte == 0x0A && lastWasCR {
                lastWasCR = false
                continue
            }
            lastWasCR = byte == 0x0D
            if byte == 0x0A || byte == 0x0D {
                if let event = endLine() { events.append(event) }
            } else if line.count < maxLine {
                line.append(byte)
            }
        }
        return events
    }

    /// At end of stream: an event not yet ended by a blank line still counts.
    public mutating func finish() -> Event? {
        if !line.isEmpty { _ = endLine() }
        return dispatch()
    }

    private mutating func endLine() -> Event? {
        defer { line.removeAll(keepingCapacity: true) }
        if line.isEmpty { return dispatch() }
        if line.first == UInt8(ascii: ":") { return nil }
        let text = String(decoding: line, as: UTF8.self)
        let field: Substring
        var value: Substring
        if let colon = text.firstIndex(of: ":") {
            field = text[..<colon]
            value = text[text.index(after: colon)...]
            if value.first == " " { value = value.dropFirst() }
        } else {
            field = text[...]
            value = ""
        }
        switch field {
        case "data":
            if dataLines.reduce(0, { $0 + $1.utf8.count }) < 4 * maxLine { dataLines.append(String(value)) }
        case "event": eventName = String(value)
        default: break  // id, retry and unknown fields do not matter here
        }
        return nil
    }

    private mutating func dispatch() -> Event? {
        defer {
            dataLines.removeAll()
            eventName = nil
        }
        guard !dataLines.isEmpty else { return nil }
        return Event(event: eventName, data: dataLines.joined(separator: "\n"))
    }
}
