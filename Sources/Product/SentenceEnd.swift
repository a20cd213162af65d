// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation

/// How a transcript so far ends, so the turn may end at a short pause instead of waiting out the
/// long silence. Errs on the patient side: a wrong "unfinished" costs the wearer the long
/// silence, a wrong "question" cuts their question short.
public enum SentenceEnd: Sendable, Equatable {
    /// Not a whole sentence (or not one this can judge): the long silence ends the turn.
    case unfinished
    /// A whole question ("?"): the turn ends at once.
    case question
    /// A whole sentence that is not a question ("." or "!"): it may go on after a breath ("who
    /// wrote the book" … "Pride and Prejudice"), so a longer pause ends it.
    case statement

    /// Whole: it ends with Whisper's ".", "?" or "!" (not "..." or "…", which it writes for
    /// speech trailing off) and its last word is not one a sentence cannot end on in English.
    /// Other languages than English have no such list here: unfinished (the long silence).
    public init(_ text: String, language: String? = nil) {
        self = .unfinished
        if let language, !language.isEmpty, language.lowercased() != "en" { return }
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let last = trimmed.last, ".?!".contains(last), !trimmed.hasSuffix("..") else { return }
        let words = trimmed.lowercased().split { !($0.isLetter || $0 == "'") }
        guard let word = words.last, !Self.dangling.contains(String(word)) else { return }
        self = last == "?" ? .question : .statement
    }

    /// Words a question cut at a pause ends on: conjunctions, prepositions, articles and other
    /// determiners, fillers, auxiliaries and the "to" of an infinitive ("what is the capital of").
    static let dangling: Set<String> = [
        // conjunctions
        "and", "or", "but", "nor", "so", "because", "if", "than", "that", "whether", "while", "when", "where",
        "although", "though", "unless", "until", "since", "as", "then",
        // prepositions
        "of", "to", "in", "on", "at", "for", "with", "without", "from", "by", "about", "into", "onto", "over",
        "under", "between", "among", "through", "after", "before", "during", "near", "like", "via", "per",
        "towards", "toward", "against", "across", "behind", "beyond",
        // articles, determiners, possessives
        "a", "an", "the", "this", "these", "those", "my", "your", "his", "her", "its", "our", "their", "some",
        "any", "every", "each", "which", "whose", "what's",
        // fillers
        "um", "uh", "er", "erm", "uhm", "hmm", "mm", "ah", "well",
        // auxiliaries and question words that need more
        "is", "are", "was", "were", "be", "been", "do", "does", "did", "can", "could", "will", "would", "should",
        "shall", "may", "might", "must", "have", "has", "had", "what", "who", "how", "why", "i", "i'm",
        "you're", "we're", "they're", "it's", "there's", "let's",
    ]
}
