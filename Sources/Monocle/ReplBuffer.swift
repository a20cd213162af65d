// SPDX-License-Identifier: GPL-2.0-or-later

/// What one raw-REPL command gave: `OK<stdout>\x04<stderr>\x04>`.
public struct ReplResult: Sendable, Equatable {
    public var stdout: String
    public var stderr: String

    public init(stdout: String, stderr: String) {
        self.stdout = stdout
        self.stderr = stderr
    }
}

/// The REPL's output as it accumulates, and the pieces a driver looks for in it. Replies come
/// split across notifications at any byte, with stale banners, tracebacks and friendly prompts
/// in front; everything before the piece looked for is dropped with it.
public struct ReplBuffer: Sendable {
    /// What the device prints on entering (or re-entering) the raw REPL.
    public static let banner = Array("raw REPL; CTRL-B to exit\r\n>".utf8)
    static let ok = Array("OK".utf8)

    public private(set) var bytes: [UInt8] = []
    /// Output kept while waiting; beyond it the oldest goes (a chatty script cannot grow it).
    public let limit: Int

    public init(limit: Int = 64 * 1024) {
        self.limit = limit
    }

    public mutating func append(_ more: [UInt8]) {
        bytes += more
        if bytes.count > limit { bytes.removeFirst(bytes.count - limit) }
    }

    public mutating func clear() { bytes.removeAll(keepingCapacity: true) }

    /// Consumes everything up to and including the first complete banner; false if none yet.
    public mutating func takeBanner() -> Bool {
        guard let range = find(Self.banner, from: 0) else { return false }
        bytes.removeFirst(range.upperBound)
        return true
    }

    /// Consumes the first complete command result; nil while none is complete.
    public mutating func takeResult() -> ReplResult? {
        guard let ok = find(Self.ok, from: 0),
            let firstEnd = bytes[ok.upperBound...].firstIndex(of: 0x04),
            let secondEnd = bytes[(firstEnd + 1)...].firstIndex(of: 0x04),
            secondEnd + 1 < bytes.count
        else { return nil }
        let stdout = String(decoding: bytes[ok.upperBound..<firstEnd], as: UTF8.self)
        let stderr = String(decoding: bytes[(firstEnd + 1)..<secondEnd], as: UTF8.self)
        // The prompt follows; if a byte was lost there, what follows is kept for the next look.
        let end = bytes[secondEnd + 1] == UInt8(ascii: ">") ? secondEnd + 2 : secondEnd + 1
        bytes.removeFirst(end)
        return ReplResult(stdout: stdout, stderr: stderr)
    }

    /// Consumes everything up to and including the first `marker`; false if it has not come yet.
    public mutating func take(through marker: String) -> Bool {
        guard let range = find(Array(marker.utf8), from: 0) else { return false }
        bytes.removeFirst(range.upperBound)
        return true
    }

    private func find(_ needle: [UInt8], from start: Int) -> Range<Int>? {
        guard !needle.isEmpty, bytes.count - start >= needle.count else { return nil }
        var i = start
        let last = bytes.count - needle.count
        while i <= last {
            if bytes[i] == needle[0] && bytes[i..<(i + needle.count)].elementsEqual(needle) {
                return i..<(i + needle.count)
            }
            i += 1
        }
        return nil
    }
}

extension ReplResult {
    /// The exception line of a traceback ("NameError: name 'x' isn't defined"), if stderr has one.
    public var exception: String? {
        let lines = stderr.split(whereSeparator: \.isNewline).map { $0.trimmingSpaces }
        return lines.last { !$0.isEmpty }
    }
}

extension Substring {
    fileprivate var trimmingSpaces: String {
        String(drop(while: { $0 == " " }).reversed().drop(while: { $0 == " " }).reversed())
    }
}
