// SPDX-License-Identifier: GPL-2.0-or-later

/// Chooses which earlier messages go with a question: the newest that fit in a character budget.
/// Whole turns (a question and its answer) are dropped from the oldest end, so the model never sees
/// an answer without its question; the rest of the conversation survives, unlike clearing it all.
public enum ContextBudget {
    /// `history` is oldest first; the result is the newest suffix of it whose text fits in `budget`
    /// characters, cut only at the start of a user message.
    public static func select(_ history: [ChatMessage], budget: Int) -> [ChatMessage] {
        guard budget > 0 else { return [] }
        var used = 0
        var start = history.count
        var index = history.count - 1
        var candidate = history.count
        while index >= 0 {
            used += history[index].content.count
            if used > budget { break }
            if history[index].role == .user { candidate = index }
            start = candidate
            index -= 1
        }
        return Array(history[start...])
    }
}
