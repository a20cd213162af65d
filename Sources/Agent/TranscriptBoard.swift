// SPDX-License-Identifier: GPL-2.0-or-later

/// The conversation as shown: the last lines of both speakers, kept by TEN's own client's rules.
/// Per speaker, a non-final piece replaces that speaker's open (non-final) line, a final one closes
/// it; a piece not newer than the speaker's last final line is stale and dropped. Assistant text is
/// cumulative, so replacing is right for it too.
public struct TranscriptBoard: Sendable {
    public static let maxLines = 20

    public struct Line: Sendable, Equatable {
        public var role: Transcript.Role
        public var text: String
        public var isFinal: Bool
        public var textTS: UInt64

        public init(role: Transcript.Role, text: String, isFinal: Bool, textTS: UInt64) {
            self.role = role
            self.text = text
            self.isFinal = isFinal
            self.textTS = textTS
        }
    }

    /// What a piece changed on the board.
    public struct Change: Sendable, Equatable {
        /// The line as it is now (added or updated).
        public var line: Line
        /// Set when the piece closed a line: the caller keeps it (History).
        public var finalized: Line? { line.isFinal ? line : nil }
    }

    public private(set) var lines: [Line] = []
    private var lastFinalTS: [Transcript.Role: UInt64] = [:]

    public init() {}

    /// nil when nothing visible changed: a raw item, empty text, a stale piece, the same text again.
    public mutating func apply(_ t: Transcript) -> Change? {
        guard t.dataType != "raw", t.text.contains(where: { !$0.isWhitespace }) else { return nil }
        if let last = lastFinalTS[t.role], t.textTS <= last { return nil }
        let line = Line(role: t.role, text: t.text, isFinal: t.isFinal, textTS: t.textTS)
        if t.isFinal { lastFinalTS[t.role] = t.textTS }
        if let open = lines.lastIndex(where: { $0.role == t.role && !$0.isFinal }) {
            let same = lines[open].text == line.text
            lines[open] = line
            if same && !line.isFinal { return nil }
        } else {
            lines.append(line)
            if lines.count > Self.maxLines { lines.removeFirst(lines.count - Self.maxLines) }
        }
        return Change(line: line)
    }
}
