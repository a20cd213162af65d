// SPDX-License-Identifier: GPL-2.0-or-later

/// Where conversations are kept (SQLite in the daemon).
public protocol ConversationStore: Sendable {
    /// The last `limit` messages of the current conversation, oldest first.
    func recentMessages(limit: Int) async throws -> [StoredMessage]
    /// Stores a question and its answer together: both or neither, with the tokens the answer's
    /// request used (nil: the server did not say). With `newConversation` the turn begins a new
    /// current conversation; the earlier ones stay, as past conversations.
    func appendTurn(
        queryID: String, question: String, answer: String, mode: Mode, at unixMS: Int64, usage: TokenUsage?,
        newConversation: Bool
    ) async throws
    /// The answer to `queryID` as far as the wearer heard it before cutting it off: its text
    /// replaced by `text`, marked cut (History keeps what was said, and so does the next context).
    func cutAnswer(queryID: String, to text: String) async throws
    /// The tokens the current conversation's turns used, as reported; turns without a report add nothing.
    func tokensUsed() async throws -> Int64
    /// Forgets every message.
    func clearHistory() async throws
}

extension ConversationStore {
    /// A turn of the current conversation with no token report.
    public func appendTurn(queryID: String, question: String, answer: String, mode: Mode, at unixMS: Int64) async throws {
        try await appendTurn(
            queryID: queryID, question: question, answer: answer, mode: mode, at: unixMS, usage: nil,
            newConversation: false)
    }
}
