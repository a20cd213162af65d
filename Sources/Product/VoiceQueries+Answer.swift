// SPDX-License-Identifier: GPL-2.0-or-later
import AnswerModel
import AssistantEngine
import Audio
import Concurrency
import Foundation
import GlassdAPI
import Glasses
import Logging
import Synchronization

/// One question from its recording to its answer: transcribed (or its eager transcript taken),
/// answered, shown and spoken, cut by a tap or the wearer's voice, and its turn's timeline kept.
extension VoiceQueries {
    /// One question, from its recording to its answer on the glasses; `cancel` fires on a tap.
    func answer(
        _ id: String, utterance: Utterance, eager: EagerUse, photo: Result<[UInt8]?, VoiceFailure>, cancel: OneShotEvent,
        timeline: TurnTimeline
    ) async {
        let log = {
            var log = logger
            log[metadataKey: "query_id"] = "\(id)"
            return log
        }()
        let stream: AnswerStream?
        do {
            stream = try await session.answerStream()
        } catch {
            log.info("cannot show the answer on the glasses: \(error)")
            stream = nil
        }
        let spoken: SpokenAnswer? =
            if let speech, let speaker = await session.speaker() {
                SpokenAnswer(speaker: speaker, voice: speech.voice, volume: speech.volume, listen: speech.bargeInByVoice, logger: log)
            } else { nil }
        async let spokenReport = spoken?.run()
        // What was heard, for a turn cut while it streamed (kept as far as it was spoken).
        let heard = HeardQuestion()
        let outcome = await withTaskGroup(of: Result<(question: String, reply: AssistantReply), any Error>?.self) { group in
            group.addTask {
                do {
                    return .success(
                        try await GlassesAnswer.showing(stream, onLinkLoss: .abandon, logger: log) {
                            try await work(
                                id, utterance: utterance, eager: eager, photo: photo, stream: stream, spoken: spoken, heardBox: heard,
                                timeline: timeline, logger: log)
                        })
                } catch {
                    return .failure(error)
                }
            }
            group.addTask {
                await cancel.wait()
                return nil
            }
            let first = await group.next() ?? nil
            if first == nil { stream?.cancel() }
            group.cancelAll()
            return first ?? .failure(VoiceFailure.cancelled)
        }
        // Only now, with the answer (and end:) written to the glasses, is the question over.
        switch outcome {
        case .success(let turn):
            signals.answered(id, question: turn.question, answer: turn.reply.text)
            signals.answerTyped(id, turn.reply)
        case .failure(let error): fail(id, error)
        }
        await session.answerFinished(stream)
        let laidOut: ContinuousClock.Instant? =
            if case .success(let turn) = outcome {
                await GlassesAnswer.showLaidOut(turn.reply.typed, on: session, logger: log)
            } else { nil }
        if let spoken {
            switch outcome {
            case .success: spoken.finish()
            case .failure(VoiceFailure.cancelled): spoken.cutByWearer()
            case .failure: spoken.cancel()
            }
            // Speech may go on after the text is shown: a tap (or the next question) still stops it.
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    await cancel.wait()
                    spoken.cutByWearer()
                }
                group.addTask { await spoken.ended() }
                await group.next()
                group.cancelAll()
            }
        }
        if let report = await spokenReport {
            spoken?.log(report, logger: log)
            if let spoken, spoken.wasCutByWearer {
                await keepCut(id, said: spoken.said(report), outcome: outcome, heard: heard.text, logger: log)
            }
        }
        await timeline.keep(in: turns, queryID: id, at: now(), stream: stream, laidOut: laidOut, spoken: spoken, logger: log)
    }

    /// An answer the wearer cut off while it was spoken is kept as far as it was said, marked
    /// cut. Nothing is kept for a question cut before a word was said.
    private func keepCut(
        _ id: String, said: String, outcome: Result<(question: String, reply: AssistantReply), any Error>,
        heard: String?, logger: Logger
    ) async {
        guard !said.isEmpty else { return }
        do {
            switch outcome {
            case .success(let turn):
                guard said != turn.reply.text.trimmingCharacters(in: .whitespacesAndNewlines) else { return }
                try await assistant.cut(queryID: id, question: nil, spoken: said, mode: mode.mode)
            case .failure(let error):
                // Only a question the wearer cut off (not one that failed) is kept as spoken.
                guard case VoiceFailure.cancelled = error, let heard, mode.mode != .translator else { return }
                try await assistant.cut(queryID: id, question: heard, spoken: said, mode: mode.mode)
            }
            logger.info("the answer was cut as it was spoken", metadata: ["kept_chars": "\(said.count)"])
        } catch {
            logger.warning("the cut answer could not be kept: \(error)")
        }
    }

    /// Returns the turn as stored: the question and its answer.
    private func work(
        _ id: String, utterance: Utterance, eager: EagerUse, photo: Result<[UInt8]?, VoiceFailure>,
        stream: AnswerStream?,
        spoken: SpokenAnswer?, heardBox: HeardQuestion, timeline: TurnTimeline, logger: Logger
    ) async throws -> (question: String, reply: AssistantReply) {
        guard utterance.hasSpeech else { throw VoiceFailure.noSpeech }
        var image = try photo.get()
        if image == nil && mode.mode == .scene { image = await latestSceneFrame() }
        guard abilities.hears else { throw VoiceFailure.cannotHear }
        guard abilities.sees || image == nil else { throw VoiceFailure.cannotSee }
        guard let transcriber else {
            throw AssistantError.notConfigured("No speech server is configured: set [assistant] base_url in glassd.conf.")
        }
        let translate = mode.mode == .translator
        guard !translate || abilities.translates else { throw VoiceFailure.cannotTranslate }
        let heard: String
        if !translate, let early = await eager.transcript?.transcript() {
            timeline.mark(.audioSent, at: early.sent)
            timeline.mark(.transcript, at: early.back)
            heard = early.text
        } else {
            eager.transcript?.drop()  // failed, or the mode changed since
            let wav = utterance.wav()
            timeline.mark(.audioSent)
            heard = try await transcriber.transcribe(wav: wav, task: translate ? .translate : .transcribe)
            timeline.mark(.transcript)
        }
        guard !Self.heardNothing(heard) else { throw VoiceFailure.noWords }
        do {
            try await transcriptions.insert(id: id, text: heard, device: await device(), at: now())
        } catch {
            throw AssistantError.internalFailure("The transcription could not be saved.")
        }
        signals.transcribed(id, heard)
        logger.info(
            "question heard",
            metadata: ["chars": "\(heard.count)", "photo": "\(image?.count ?? 0)", "eager_requests": "\(eager.requests)"])
        let question: String
        let answer: AssistantReply
        if !translate { heardBox.text = heard }
        if translate {
            question = Self.spokenQuestion
            answer = AssistantReply(text: heard, typed: .text(heard), answeredBy: nil)
            timeline.mark(.firstToken)
            signals.answerDelta(id, heard)
            stream?.append(heard)
            spoken?.append(heard)
            try await assistant.record(question: question, answer: heard, queryID: id, mode: .translator)
        } else {
            question = heard
            stream?.heading(ConversationNotice.heading(question: heard))
            answer = try await assistant.reply(
                heard, queryID: id, mode: mode.mode, image: image, model: image == nil ? nil : visionModel,
                onNewConversation: ConversationNotice.announcer(
                    question: heard, stream: stream, limit: assistant.conversationTokenLimit, logger: logger),
                onPiece: GlassesAnswer.pieces(of: id, timeline: timeline, signals: signals, stream: stream, spoken: spoken))
        }
        if let image {
            do {
                try await photos.save(queryID: id, jpeg: image, at: now())
            } catch {
                logger.warning("the photo could not be kept: \(error)")
            }
        }
        do {
            try await transcriptions.markConsumed(id: id, at: now())
        } catch {
            logger.warning("the transcription could not be marked consumed: \(error)")
        }
        return (question, answer)
    }
}

/// The question as heard, once it is: kept for an answer cut while it streamed.
final class HeardQuestion: Sendable {
    private let value = Mutex<String?>(nil)

    var text: String? {
        get { value.withLock { $0 } }
        set { value.withLock { $0 = newValue } }
    }
}

