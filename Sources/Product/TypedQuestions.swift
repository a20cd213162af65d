// SPDX-License-Identifier: GPL-2.0-or-later
import AssistantEngine
import Foundation
import Glasses
import Logging

/// Questions typed by a caller (the daemon's Manager1.Query): answered to the caller as the answer
/// streams, with the conversation so far and in the current mode, and shown on the glasses too
/// when they are idle and the caller may write on them as Display does. A question the assistant
/// will refuse is not shown. Spoken on the glasses' speaker only when the caller asks for it.
public struct TypedQuestions: Sendable {
    let assistant: Assistant
    /// The glasses, when glassd has a link to them.
    let session: (any GlassesSession)?
    let signals: any QueryEvents
    let mode: ModeSetting
    /// How answers are spoken; nil: never (`[speech_out] speak = "never"`, or no server).
    let speech: SpeechOut?
    let logger: Logger
    /// Where each question's timeline is kept (from its arrival); nil: nowhere.
    let turns: (any TurnRecords)?

    public init(
        assistant: Assistant, session: (any GlassesSession)?, signals: any QueryEvents, mode: ModeSetting,
        speech: SpeechOut? = nil, logger: Logger, turns: (any TurnRecords)? = nil
    ) {
        self.turns = turns
        self.assistant = assistant
        self.session = session
        self.signals = signals
        self.mode = mode
        self.speech = speech
        self.logger = logger
    }

    /// Asks `text` as query `id`: each piece of the answer, then the answer and its structure, or
    /// the failure, go to `signals`; returns the reply. `mayShow` says whether the caller may
    /// write on the glasses (show, and speak); it is asked only when there are glasses to show a
    /// valid question on. With `speak`, the answer is spoken too on glasses with a speaker, and
    /// the reply comes once the speech has ended; a tap that stops the speech leaves the answer whole.
    public func ask(
        _ text: String, id: String, speak: Bool = false, mayShow: @escaping @Sendable () async -> Bool
    ) async throws(AssistantError) -> AssistantReply {
        let log = {
            var log = logger
            log[metadataKey: "query_id"] = "\(id)"
            return log
        }()
        log.debug("query", metadata: ["text": "\(text)"])
        let timeline = TurnTimeline()
        let allowed = await mayWrite(question: text, mayShow: mayShow, logger: log)
        let stream = allowed ? try? await session?.answerStream(claim: true) : nil
        stream?.heading(ConversationNotice.heading(question: text))
        // Spoken only with the glasses claimed for this answer: busy glasses speak their own.
        let spoken = speak && stream != nil ? await spokenAnswer(logger: log) : nil
        async let spokenReport = spoken?.run()
        let answer: Result<AssistantReply, AssistantError>
        do {
            answer = .success(
                try await GlassesAnswer.showing(stream, onLinkLoss: .ignore, logger: log) { [assistant, signals, mode] in
                    try await assistant.reply(
                        text, queryID: id, mode: mode.mode,
                        onNewConversation: ConversationNotice.announcer(
                            question: text, stream: stream, limit: assistant.conversationTokenLimit, logger: log),
                        onPiece: GlassesAnswer.pieces(of: id, timeline: timeline, signals: signals, stream: stream, spoken: spoken))
                })
        } catch let error as AssistantError {
            answer = .failure(error)
        } catch {
            // Only a cancelled task ends otherwise (the caller waits on, should the glasses go
            // away): said as the assistant says a turn cancelled under it.
            answer = .failure(.upstreamFailed("The question was cancelled."))
        }
        var laidOut: ContinuousClock.Instant?
        if let stream, let session {
            // The stream has ended (its end written) before the pages replace it.
            await session.answerFinished(stream)
            if case .success(let reply) = answer { laidOut = await GlassesAnswer.showLaidOut(reply.typed, on: session, logger: log) }
        }
        if let spoken {
            // The speech plays out (or a tap on the glasses cuts it): the answer is whole either way.
            if case .success = answer { spoken.finish() } else { spoken.cancel() }
            if let report = await spokenReport { spoken.log(report, logger: log) }
        }
        let unixMS = Int64(Date().timeIntervalSince1970 * 1000)
        await timeline.keep(in: turns, queryID: id, at: unixMS, stream: stream, laidOut: laidOut, spoken: spoken, logger: log)
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

    /// Whether the answer may go to the glasses (shown, spoken): there are glasses, the question
    /// is valid and the caller may write on them; else only the caller sees the answer.
    private func mayWrite(question: String, mayShow: @Sendable () async -> Bool, logger: Logger) async -> Bool {
        guard session != nil, (try? Assistant.validate(question)) != nil else { return false }
        guard await mayShow() else {
            logger.info("typed question not shown on the glasses: the caller may not use Display")
            return false
        }
        return true
    }

    /// The answer spoken on the glasses' speaker, when speech is on and they have one.
    private func spokenAnswer(logger: Logger) async -> SpokenAnswer? {
        guard let speech, let speaker = await session?.speaker() else {
            logger.info("typed answer not spoken: \(speech == nil ? "speech is off" : "the glasses have no speaker")")
            return nil
        }
        return SpokenAnswer(speaker: speaker, voice: speech.voice, volume: speech.volume, listen: speech.bargeInByVoice, logger: logger)
    }
}
