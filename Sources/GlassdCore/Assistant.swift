// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation

/// One assistant turn: the question with the conversation so far goes to the chat server, the
/// answer streams back, and both are stored before the answer is returned.
public struct Assistant: Sendable {
    /// Questions longer than this are refused (bytes of UTF-8).
    public static let maxQuestionBytes = 16 * 1024
    /// How many stored messages the first turn reads before the character budget trims them.
    static let historyWindow = 1000

    private let client: OpenAIChatClient?
    private let store: any ConversationStore
    private let context: ConversationContext
    private let now: @Sendable () -> Int64

    /// `client` is nil when no server is configured: questions then fail with `.notConfigured`.
    public init(
        client: OpenAIChatClient?, store: any ConversationStore, historyBudget: Int,
        now: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970 * 1000) }
    ) {
        self.client = client
        self.store = store
        self.context = ConversationContext(store: store, budget: historyBudget, window: Self.historyWindow)
        self.now = now
    }

    public func ask(
        _ text: String, queryID: String, mode: Mode, onDelta: @Sendable (String) async -> Void
    ) async throws(AssistantError) -> String {
        try Self.validate(text)
        guard let client else {
            throw .notConfigured("No assistant server is configured: set [assistant] base_url in glassd.conf.")
        }
        let earlier: [ChatMessage]
        do {
            earlier = try await context.messages()
        } catch {
            throw .internalFailure("Could not read the conversation history.")
        }
        let messages = [ChatMessage(.system, mode.systemPrompt)] + earlier + [ChatMessage(.user, text)]
        let answer = try await client.complete(messages, onDelta: onDelta)
        do {
            try await store.appendTurn(queryID: queryID, question: text, answer: answer, mode: mode, at: now())
        } catch {
            throw .internalFailure("The answer could not be saved.")
        }
        context.append(question: text, answer: answer)
        return answer
    }

    /// Forgets every message, stored and in memory.
    public func clearHistory() async throws {
        try await store.clearHistory()
        context.clear()
    }

    public static func validate(_ text: String) throws(AssistantError) {
        if text.allSatisfy(\.isWhitespace) { throw .invalidArgs("The question is empty.") }
        if text.utf8.count > maxQuestionBytes { throw .invalidArgs("The question is longer than 16 KiB.") }
    }
}
