// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation

/// One assistant turn: the question with the conversation so far goes to the chat server, the
/// answer streams back, and both are stored before the answer is returned.
public struct Assistant: Sendable {
    /// Questions longer than this are refused (bytes of UTF-8).
    public static let maxQuestionBytes = 16 * 1024
    /// How many stored messages are considered before the character budget trims them.
    static let historyWindow = 200

    private let client: OpenAIChatClient?
    private let store: any ConversationStore
    private let historyBudget: Int
    private let now: @Sendable () -> Int64

    /// `client` is nil when no server is configured: questions then fail with `.notConfigured`.
    public init(
        client: OpenAIChatClient?, store: any ConversationStore, historyBudget: Int,
        now: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970 * 1000) }
    ) {
        self.client = client
        self.store = store
        self.historyBudget = historyBudget
        self.now = now
    }

    public func ask(
        _ text: String, queryID: String, mode: Mode, onDelta: @Sendable (String) async -> Void
    ) async throws(AssistantError) -> String {
        try Self.validate(text)
        guard let client else {
            throw .notConfigured("No assistant server is configured: set [assistant] base_url in glassd.conf.")
        }
        let history: [StoredMessage]
        do {
            history = try await store.recentMessages(limit: Self.historyWindow)
        } catch {
            throw .internalFailure("Could not read the conversation history.")
        }
        let context = ContextBudget.select(history.map { ChatMessage($0.role, $0.text) }, budget: historyBudget)
        let messages = [ChatMessage(.system, mode.systemPrompt)] + context + [ChatMessage(.user, text)]
        let answer = try await client.complete(messages, onDelta: onDelta)
        do {
            try await store.appendTurn(queryID: queryID, question: text, answer: answer, mode: mode, at: now())
        } catch {
            throw .internalFailure("The answer could not be saved.")
        }
        return answer
    }

    /// Forgets every message.
    public func clearHistory() async throws {
        try await store.clearHistory()
    }

    public static func validate(_ text: String) throws(AssistantError) {
        if text.allSatisfy(\.isWhitespace) { throw .invalidArgs("The question is empty.") }
        if text.utf8.count > maxQuestionBytes { throw .invalidArgs("The question is longer than 16 KiB.") }
    }
}
