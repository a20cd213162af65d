// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation

/// Whether a transcript so far reads as a finished sentence, so the turn may end at a short pause
/// instead of waiting out the long silence. Errs on the patient side: a wrong "no" costs the
/// wearer the long silence, a wrong "yes" cuts their question short.
public enum SentenceEnd {
    /// Finished: it ends with Whisper's ".", "?" or "!" (not "..." or "…", which it writes for
    /// speech trailing off) and its last word is not one a sentence cannot end on in English.
    /// Other languages than English have no such list here: never finished (the long silence).
    public static func looksFinished(_ text: String, language: String? = nil) -> Bool {
        if let language, !language.isEmpty, language.lowercased() != "en" { return false }
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let last = trimmed.last, ".?!".contains(last) else { return false }
        guard !trimmed.hasSuffix("..") else { return false }
        let words = trimmed.lowercased().split { !($0.isLetter || $0 == "'") }
        guard let word = words.last else { return false }
        return !dangling.contains(String(word))
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
