// SPDX-License-Identifier: GPL-2.0-or-later

/// Cuts an answer, as it streams in pieces, into sentences to speak one by one: the first is
/// spoken while the model still writes the next. A sentence ends at `.`, `!`, `?`, `;` or `…`
/// (with any closing quotes or brackets) followed by a space, at a line break, or at CJK full
/// stops; not at a decimal point, an abbreviation ("Dr.", "e.g."), an initial ("J. Smith") or a
/// list number ("1. "). A run with no end longer than `longest` characters is cut at its last
/// comma, else its last space, so one long sentence cannot hold the speaker back.
public struct SentenceSplitter: Sendable {
    private var pending = ""
    private let longest: Int

    public init(longest: Int = 200) {
        precondition(longest > 20)
        self.longest = longest
    }

    /// Adds a piece of the answer; returns the sentences it completed, in order.
    public mutating func feed(_ piece: String) -> [String] {
        pending += piece
        var out: [String] = []
        while let end = firstEnd() {
            let sentence = String(pending[..<end]).trimmingSpaces
            pending = String(pending[end...])
            if !sentence.isEmpty { out.append(sentence) }
        }
        return out
    }

    /// The rest of the answer once it is complete (nil when nothing is left to say).
    public mutating func finish() -> String? {
        defer { pending = "" }
        let rest = pending.trimmingSpaces
        return rest.isEmpty ? nil : rest
    }

    /// Where the first complete sentence in `pending` ends, if one does.
    private func firstEnd() -> String.Index? {
        let text = pending
        var i = text.startIndex
        var count = 0
        while i < text.endIndex {
            let c = text[i]
            count += 1
            if c == "\n" {
                return text.index(after: i)
            }
            if Self.fullStops.contains(c) {
                return text.index(after: i)
            }
            if Self.terminators.contains(c) {
                var j = text.index(after: i)
                while j < text.endIndex, Self.closers.contains(text[j]) { j = text.index(after: j) }
                guard j < text.endIndex else { return nil }  // the next piece decides
                if text[j].isWhitespace, c != "." || !Self.continues(text[..<i]) { return j }
            }
            if count >= longest { return cut(text[..<text.index(after: i)]) }
            i = text.index(after: i)
        }
        return nil
    }

    /// A run too long to wait for its end: cut after its last comma, else its last space.
    private func cut(_ run: Substring) -> String.Index? {
        if let comma = run.lastIndex(where: { $0 == "," || $0 == "，" }) { return run.index(after: comma) }
        if let space = run.lastIndex(where: \.isWhitespace), space > run.startIndex { return space }
        return run.endIndex
    }

    /// Whether a period after `before` does not end the sentence: after an abbreviation, an
    /// initial, or a list number at the start of a line.
    private static func continues(_ before: Substring) -> Bool {
        let word = before.reversed().prefix { !$0.isWhitespace && $0 != "(" && $0 != "\"" }
        let token = String(word.reversed())
        if token.isEmpty { return false }
        if token.count == 1, token.first?.isLetter == true { return true }
        if abbreviations.contains(token.lowercased()) { return true }
        if token.allSatisfy(\.isNumber) {
            let start = before.dropLast(token.count)
            return start.allSatisfy(\.isWhitespace) || start.last == "\n"
        }
        return false
    }

    private static let terminators: Set<Character> = [".", "!", "?", ";", "…"]
    private static let fullStops: Set<Character> = ["。", "！", "？", "；"]
    private static let closers: Set<Character> = ["\"", "'", ")", "]", "”", "’", "»", "*", "_"]
    private static let abbreviations: Set<String> = [
        "mr", "mrs", "ms", "dr", "prof", "st", "vs", "e.g", "i.e", "approx", "fig", "jr", "sr", "mt",
    ]
}

extension String {
    fileprivate var trimmingSpaces: String {
        String(drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
    }
}
