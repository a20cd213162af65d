// SPDX-License-Identifier: GPL-2.0-or-later
import AssistantEngine
import Glasses
import Logging

/// Questions typed by a caller (the daemon's Manager1.Query): answered to the caller as the answer
/// streams, with the conversation so far and in the current mode, and shown on the glasses too
/// when they are idle and the caller may write on them as Display does. A question the assistant
/// will refuse is not shown.
public struct TypedQuestions: Sendable {
    let assistant: Assistant
    /// The glasses, when glassd has a link to them.
    let session: (any GlassesSession)?
    let signals: any QueryEvents
    let mode: ModeSetting
    let logger: Logger

    public init(
        assistant: Assistant, session: (any GlassesSession)?, signals: any QueryEvents, mode: ModeSetting, logger: Logger
    ) {
        self.assistant = assistant
        self.session = session
        self.signals = signals
        self.mode = mode
        self.logger = logger
    }

    /// Asks `text` as query `id`: each piece of the answer, then the answer and its structure, or
    /// the failure, go to `signals`; returns the reply. `mayShow` says whether the caller may
    /// write on the glasses; it is asked only when there are glasses to show a valid question on.
    public func ask(
        _ text: String, id: String, mayShow: @escaping @Sendable () async -> Bool
    ) async throws(AssistantError) -> AssistantReply {
        let log = {
            var log = logger
            log[metadataKey: "query_id"] = "\(id)"
            return log
        }()
        log.debug("query", metadata: ["text": "\(text)"])
        let stream = await glassesStream(question: text, mayShow: mayShow, logger: log)
        let answer: Result<AssistantReply, AssistantError>
        do {
            answer = .success(
                try await GlassesAnswer.showing(stream, onLinkLoss: .ignore, logger: log) { [assistant, signals, mode] in
                    try await assistant.reply(
                        text, queryID: id, mode: mode.mode,
                        onNewConversation: ConversationNotice.announcer(
                            question: text, stream: stream, limit: assistant.conversationTokenLimit, logger: log)
                    ) { piece in
                        signals.answerDelta(id, piece)
                        stream?.append(piece)
                    }
                })
        } catch let error as AssistantError {
            answer = .failure(error)
        } catch {
            // Only a cancelled task ends otherwise (the caller waits on, should the glasses go
            // away): said as the assistant says a turn cancelled under it.
            answer = .failure(.upstreamFailed("The question was cancelled."))
        }
        if let stream, let session {
            await session.answerFinished(stream)
            if case .success(let reply) = answer { await GlassesAnswer.showLaidOut(reply.typed, on: session, logger: log) }
        }
        switch answer {
        case .success(let reply):
            signals.answered(id, question: text, answer: reply.text)
            signals.answerTyped(id, reply)
            log.info(
                "answered", metadata: ["answer_chars": "\(reply.text.count)", "answered_by": "\(reply.answeredBy ?? "model")"])
            return reply
        case .failure(let error):
            signals.failed(id, error)
            throw error
        }
    }

    /// A stream to show the answer on the glasses, if they are idle and the question valid and
    /// the caller may write on them; else only the caller sees the answer.
    private func glassesStream(
        question: String, mayShow: @Sendable () async -> Bool, logger: Logger
    ) async -> AnswerStream? {
        guard let session, (try? Assistant.validate(question)) != nil else { return nil }
        guard await mayShow() else {
            logger.info("typed question not shown on the glasses: the caller may not use Display")
            return nil
        }
        guard let stream = try? await session.answerStream(claim: true) else { return nil }
        stream.heading(ConversationNotice.heading(question: question))
        return stream
    }
}
