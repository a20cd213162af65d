// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation

/// Brings an utterance to the one spelling the skills match: lowercase, single spaces, no
/// closing punctuation, "what is" for "what's", no polite or wake-word wrapping.
enum SkillText {
    /// Openings the wearer may put before any question; taken off repeatedly ("ok, please ...").
    /// "glasses" only with its comma: "glasses status" is a question.
    private static let openings = [
        "hey glasses,", "hey glasses ", "ok glasses,", "ok glasses ", "okay glasses,", "okay glasses ",
        "glasses,", "hey,", "hey ", "ok,", "ok ", "okay,", "okay ", "please,", "please ",
    ]
    private static let closing: Set<Character> = ["?", "!", ".", ",", " "]

    static func normalise(_ utterance: String) -> String {
        var text = words(of: utterance).joined(separator: " ")
        var changed = true
        while changed {
            changed = false
            while let last = text.last, closing.contains(last) {
                text.removeLast()
                changed = true
            }
            if text.hasSuffix(" please") {
                text.removeLast(" please".count)
                changed = true
            }
            for opening in openings where text.hasPrefix(opening) {
                text.removeFirst(opening.count)
                while text.first == " " { text.removeFirst() }
                changed = true
            }
        }
        return text
    }

    /// Lowercased words: typographic quotes made plain, a hyphen between letters made a space
    /// ("twenty-five"), "what's" and "whats" made "what is".
    private static func words(of utterance: String) -> [String] {
        var plain = ""
        plain.reserveCapacity(utterance.utf8.count)
        var previous: Character = " "
        var pendingHyphen = false
        for character in utterance.lowercased() {
            var character = character
            if character == "’" || character == "‘" { character = "'" }
            if pendingHyphen {
                pendingHyphen = false
                plain.append(character.isLetter && previous.isLetter ? " " : "-")
            }
            if character == "-" {
                pendingHyphen = true
                continue
            }
            plain.append(character)
            previous = character
        }
        if pendingHyphen { plain.append("-") }
        return plain.split(whereSeparator: \.isWhitespace).flatMap { word -> [String] in
            word == "what's" || word == "whats" ? ["what", "is"] : [String(word)]
        }
    }
}
