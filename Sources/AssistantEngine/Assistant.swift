// SPDX-License-Identifier: GPL-2.0-or-later
import AnswerModel
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
    private let tokens: ConversationTokens
    private let now: @Sendable () -> Int64
    /// `[assistant] kind = "susi"`: SUSI.AI answers instead of a chat model (typed answers, no
    /// conversation context: SUSI keeps none).
    private let susi: SusiClient?
    /// Instant local answers, asked before the model (and without one).
    private let local: LocalAnswering?
    /// Where answers that are more than the model's text are kept.
    private let typedAnswers: (any TypedAnswerStore)?
    /// Once the current conversation has used more tokens than this, the next question starts a
    /// new one; 0: never.
    public let conversationTokenLimit: Int64

    /// `client` is nil when no server is configured: questions then fail with `.notConfigured`.
    /// `onTokensUsed` hears the current conversation's token count after every change.
    public init(
        client: OpenAIChatClient?, store: any ConversationStore, historyBudget: Int, conversationTokenLimit: Int64 = 0,
        onTokensUsed: @escaping @Sendable (Int64) -> Void = { _ in },
        now: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970 * 1000) },
        local: LocalAnswering? = nil, typedAnswers: (any TypedAnswerStore)? = nil, susi: SusiClient? = nil
    ) {
        self.client = client
        self.susi = susi
        self.local = local
        self.typedAnswers = typedAnswers
        self.store = store
        self.context = ConversationContext(store: store, budget: historyBudget, window: Self.historyWindow)
        self.tokens = ConversationTokens(store: store, observe: onTokensUsed)
        self.conversationTokenLimit = max(0, conversationTokenLimit)
        self.now = now
    }

    /// The tokens the current conversation has used, as the server reported them (turns it
    /// reported nothing for count nothing).
    public func tokensUsed() async throws -> Int64 {
        try await tokens.used()
    }

    /// Asks `text`, with `image` (a JPEG) when the question is about a photo, of `model` when
    /// given (a vision model) or else the configured one. Only the text is kept: the history and
    /// later turns' context never carry the photo.
    ///
    /// When the current conversation has used more than `conversationTokenLimit`, the question
    /// starts a new one instead: it goes without earlier turns, and `onNewConversation` hears the
    /// old conversation's count before the request is sent. The old turns stay in the history.
    public func ask(
        _ text: String, queryID: String, mode: Mode, image: [UInt8]? = nil, model: String? = nil,
        onNewConversation: (@Sendable (Int64) -> Void)? = nil, onDelta: @Sendable (String) async -> Void
    ) async throws(AssistantError) -> String {
        try await reply(
            text, queryID: queryID, mode: mode, image: image, model: model, onNewConversation: onNewConversation,
            onPiece: { await onDelta($0.text) }
        ).text
    }

    /// As `ask`, with the answer's typed form and who answered, each piece saying whether it is
    /// a typed answer's text form (a display that lays the answer out shows that instead). A
    /// local skill answers first, when one knows the question, in any mode and with or without a
    /// photo: without a server, in well under a millisecond, kept like any other turn and marked
    /// as its skill's.
    public func reply(
        _ text: String, queryID: String, mode: Mode, image: [UInt8]? = nil, model: String? = nil,
        onNewConversation: (@Sendable (Int64) -> Void)? = nil, onPiece: @Sendable (AnswerPiece) async -> Void
    ) async throws(AssistantError) -> AssistantReply {
        try Self.validate(text)
        if let image { try Self.validate(image: image) }
        if let local, let answer = await local(text) {
            return try await whole(answer.answer, answeredBy: answer.answeredBy, to: text, queryID: queryID, mode: mode, onPiece: onPiece)
        }
        if let susi, image == nil {
            let reply = try await susi.ask(text)
            return try await whole(reply.answer, answeredBy: "susi", to: text, queryID: queryID, mode: mode, onPiece: onPiece)
        }
        guard let client else {
            throw .notConfigured("No assistant server is configured: set [assistant] base_url in glassd.conf.")
        }
        let newConversation: Bool
        let earlier: [ChatMessage]
        do {
            let used = try await tokens.used()
            newConversation = conversationTokenLimit > 0 && used > conversationTokenLimit
            if newConversation { onNewConversation?(used) }
            earlier = newConversation ? [] : try await context.messages()
        } catch {
            throw .internalFailure("Could not read the conversation history.")
        }
        let question = ChatMessage(.user, text, imageJPEG: image)
        let messages = [ChatMessage(.system, mode.systemPrompt)] + earlier + [question]
        let answer = try await client.completion(messages, model: model, onPiece: onPiece)
        try await keep(
            question: text, answer: answer.text, queryID: queryID, mode: mode, usage: answer.usage,
            newConversation: newConversation)
        if let typed = answer.typed { await keepTyped(queryID, typed, answeredBy: nil) }
        return AssistantReply(text: answer.text, typed: answer.typed ?? .text(answer.text), answeredBy: nil)
    }

    /// An answer that came whole (a local skill's, SUSI's): its text form is the one piece, the
    /// turn is kept with its typed form.
    private func whole(
        _ answer: TypedAnswer, answeredBy: String, to question: String, queryID: String, mode: Mode,
        onPiece: @Sendable (AnswerPiece) async -> Void
    ) async throws(AssistantError) -> AssistantReply {
        let text = answer.textForm
        await onPiece(.textForm(text, of: answer))
        try await keep(question: question, answer: text, queryID: queryID, mode: mode, usage: nil, newConversation: false)
        await keepTyped(queryID, answer, answeredBy: answeredBy)
        return AssistantReply(text: text, typed: answer, answeredBy: answeredBy)
    }

    /// The typed form and who answered, for AnswerOf; the turn is kept already, so a failure here
    /// loses only the structure (History has the text).
    private func keepTyped(_ queryID: String, _ answer: TypedAnswer, answeredBy: String?) async {
        try? await typedAnswers?.save(queryID: queryID, answer: answer, answeredBy: answeredBy, at: now())
    }

    /// Keeps a turn no chat model answered (a spoken translation, whose answer is the
    /// transcript) as `ask` keeps its own: stored, and context for the next turns. It joins the
    /// current conversation even past the token limit: it sent nothing to a model, so the next
    /// question asked of one is the one that starts anew.
    public func record(question: String, answer: String, queryID: String, mode: Mode) async throws(AssistantError) {
        try await keep(question: question, answer: answer, queryID: queryID, mode: mode, usage: nil, newConversation: false)
    }

    /// The answer to `queryID` as far as it was spoken: the wearer cut it off (barge-in). With
    /// `question`, the turn was not kept yet (cut while it streamed) and is stored now, as spoken.
    public func cut(queryID: String, question: String?, spoken: String, mode: Mode) async throws(AssistantError) {
        if let question { try await keep(question: question, answer: spoken, queryID: queryID, mode: mode, usage: nil, newConversation: false) }
        do {
            try await store.cutAnswer(queryID: queryID, to: spoken)
        } catch {
            throw .internalFailure("The cut answer could not be saved.")
        }
        context.reload()
    }

    private func keep(
        question: String, answer: String, queryID: String, mode: Mode, usage: TokenUsage?, newConversation: Bool
    ) async throws(AssistantError) {
        do {
            try await store.appendTurn(
                queryID: queryID, question: question, answer: answer, mode: mode, at: now(), usage: usage,
                newConversation: newConversation)
        } catch is CancellationError {
            // The asker left (or glassd is stopping): nothing is kept, as for any cancelled question.
            throw .upstreamFailed("The question was cancelled.")
        } catch {
            throw .internalFailure("The answer could not be saved.")
        }
        if newConversation { context.clear() }
        context.append(question: question, answer: answer)
        tokens.add(usage, newConversation: newConversation)
    }

    /// Forgets every message, stored and in memory.
    public func clearHistory() async throws {
        try await store.clearHistory()
        context.clear()
        tokens.clear()
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
