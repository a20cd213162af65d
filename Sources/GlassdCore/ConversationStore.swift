// SPDX-License-Identifier: GPL-2.0-or-later

/// Where conversations are kept (SQLite in the daemon).
public protocol ConversationStore: Sendable {
    /// The last `limit` messages of the current conversation, oldest first.
    func recentMessages(limit: Int) async throws -> [StoredMessage]
    /// Stores a question and its answer together: both or neither.
    func appendTurn(queryID: String, question: String, answer: String, mode: Mode, at unixMS: Int64) async throws
    /// Forgets every message.
    func clearHistory() async throws
}
