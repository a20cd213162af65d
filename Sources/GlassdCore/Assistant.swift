// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation

/// One assistant turn: the question with the conversation so far goes to the chat server, the
/// answer streams back, and both are stored before the answer is returned.
public struct Assistant: Sendable {
    /// Questions longer than this are refused (bytes of UTF-8).
    public static let maxQuestionBytes = 16 * 1024
    /// Photos larger than this are refused: a Monocle JPEG is far smaller, and servers cap the
    /// size of a request.
    public static let maxImageBytes = 10 * 1024 * 1024
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

    /// Asks `text`, with `image` (a JPEG) when the question is about a photo, of `model` when
    /// given (a vision model) or else the configured one. Only the text is kept: the history and
    /// later turns' context never carry the photo.
    public func ask(
        _ text: String, queryID: String, mode: Mode, image: [UInt8]? = nil, model: String? = nil,
        onDelta: @Sendable (String) async -> Void
    ) async throws(AssistantError) -> String {
        try Self.validate(text)
        if let image { try Self.validate(image: image) }
        guard let client else {
            throw .notConfigured("No assistant server is configured: set [assistant] base_url in glassd.conf.")
        }
        let earlier: [ChatMessage]
        do {
            earlier = try await context.messages()
        } catch {
            throw .internalFailure("Could not read the conversation history.")
        }
        let question = ChatMessage(.user, text, imageJPEG: image)
        let messages = [ChatMessage(.system, mode.systemPrompt)] + earlier + [question]
        let answer = try await client.complete(messages, model: model, onDelta: onDelta)
        try await record(question: text, answer: answer, queryID: queryID, mode: mode)
        return answer
    }

    /// Keeps a turn no chat model answered (a spoken translation, whose answer is the
    /// transcript) as `ask` keeps its own: stored, and context for the next turns.
    public func record(question: String, answer: String, queryID: String, mode: Mode) async throws(AssistantError) {
        do {
            try await store.appendTurn(queryID: queryID, question: question, answer: answer, mode: mode, at: now())
        } catch {
            throw .internalFailure("The answer could not be saved.")
        }
        context.append(question: question, answer: answer)
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

    public static func validate(image: [UInt8]) throws(AssistantError) {
        // A JPEG starts with SOI (FF D8); anything else would cost an upload to be refused.
        guard image.count >= 4, image[0] == 0xFF, image[1] == 0xD8 else {
            throw .invalidArgs("The photo is not a JPEG image.")
        }
        if image.count > maxImageBytes { throw .invalidArgs("The photo is larger than 10 MiB.") }
    }
}
