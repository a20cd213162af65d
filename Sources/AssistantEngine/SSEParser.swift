// SPDX-License-Identifier: GPL-2.0-or-later

/// An incremental parser for `text/event-stream`: feed bytes as they arrive, get whole events.
/// Lines end in LF, CRLF or CR (even when split between reads); lines starting with ":" are
/// comments; several `data:` lines join with "\n"; a blank line ends an event. A block of fields
/// with no data (or only empty `data:` lines) is no event, as the spec says; too many of those in a
/// row, or too many data lines in one event, is a server looping, not SSE: a typed error.
public struct SSEParser: Sendable {
    public enum Failure: Error, Sendable, Equatable {
        /// One event had more than `maxDataLines` data lines.
        case tooManyDataLines(Int)
        /// `maxEmptyEvents` events in a row carried no data.
        case tooManyEmptyEvents(Int)

        public var message: String {
            switch self {
            case .tooManyDataLines(let n): "an event with more than \(n - 1) data lines"
            case .tooManyEmptyEvents(let n): "\(n) events in a row without data"
            }
        }
    }

    /// A chat chunk is one line of JSON; even a server that breaks its JSON over lines stays far
    /// below this. Counted because empty `data:` lines add no bytes, so the size cap misses them.
    public static let maxDataLines = 10_000
    /// Events without data in a row (comments and stray blank lines, the usual keep-alives, do not
    /// count): no server needs a thousand of these between two chunks.
    public static let maxEmptyEvents = 1_000

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
    private var dataBytes = 0
    private var dataLineCount = 0
    /// A field other than a comment came since the last blank line.
    private var hasFields = false
    private var emptyEvents = 0
    /// A line longer than this is garbage, not SSE: cut there, so memory stays bounded; an event's
    /// data stops growing at 4 × this.
    private let maxLine: Int

    public init(maxLine: Int = 1 << 20) {
        self.maxLine = maxLine
    }

    public mutating func feed(_ bytes: some Sequence<UInt8>) throws(Failure) -> [Event] {
        var events: [Event] = []
        for byte in bytes {
            if byte == 0x0A && lastWasCR {
                lastWasCR = false
                continue
            }
            lastWasCR = byte == 0x0D
            if byte == 0x0A || byte == 0x0D {
                if let event = try endLine() { events.append(event) }
            } else if line.count < maxLine {
                line.append(byte)
            }
        }
        return events
    }

    /// At end of stream: an event not yet ended by a blank line still counts.
    public mutating func finish() throws(Failure) -> Event? {
        if !line.isEmpty { _ = try endLine() }
        return try dispatch()
    }

    private mutating func endLine() throws(Failure) -> Event? {
        defer { line.removeAll(keepingCapacity: true) }
        if line.isEmpty { return try dispatch() }
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
        hasFields = true
        switch field {
        case "data":
            dataLineCount += 1
            guard dataLineCount <= Self.maxDataLines else { throw .tooManyDataLines(dataLineCount) }
            if dataBytes < 4 * maxLine {
                dataLines.append(String(value))
                dataBytes += value.utf8.count
            }
        case "event": eventName = String(value)
        default: break  // id, retry and unknown fields do not matter here
        }
        return nil
    }

    private mutating func dispatch() throws(Failure) -> Event? {
        defer {
            dataLines.removeAll()
            dataBytes = 0
            dataLineCount = 0
            eventName = nil
            hasFields = false
        }
        // An error event counts even without data: it must end the stream, not vanish.
        guard dataBytes > 0 || (eventName == "error" && !dataLines.isEmpty) else {
            guard hasFields else { return nil }
            emptyEvents += 1
            if emptyEvents >= Self.maxEmptyEvents { throw .tooManyEmptyEvents(emptyEvents) }
            return nil
        }
        emptyEvents = 0
        return Event(event: eventName, data: dataLines.joined(separator: "\n"))
    }
}
