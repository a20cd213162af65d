// SPDX-License-Identifier: GPL-2.0-or-later
import AnswerModel
import AssistantEngine
import Glasses
import Logging

/// An answer's work and its display on the glasses, side by side: `work` streams text into the
/// stream while the stream's writer sends it, paced by the link; a failure of the work is shown
/// in red at the end.
public enum GlassesAnswer {
    /// What the glasses going away means for the work.
    public enum LinkLoss: Sendable {
        /// The answer was for them: stop it (nothing half is stored) and fail.
        case abandon
        /// Someone else waits for it too (a D-Bus caller): carry on without the glasses.
        case ignore
    }

    private enum Outcome<T: Sendable>: Sendable {
        case written((any Error)?)
        case answered(Result<T, any Error>)
    }

    /// Returns what `work` returns; with `.abandon`, throws `VoiceFailure.disconnected` if the
    /// glasses went away first.
    public static func showing<T: Sendable>(
        _ stream: AnswerStream?, onLinkLoss: LinkLoss, logger: Logger,
        _ work: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        guard let stream else { return try await work() }
        let (answer, lost) = await withTaskGroup(of: Outcome<T>.self) { group in
            group.addTask {
                do {
                    try await stream.run()
                    return .written(nil)
                } catch {
                    return .written(error)
                }
            }
            group.addTask {
                do {
                    let value = try await work()
                    stream.finish()
                    return .answered(.success(value))
                } catch {
                    stream.finish(error: VoiceFailure.glassesWording(error))
                    return .answered(.failure(error))
                }
            }
            var answer: Result<T, any Error>?
            var lost = false
            for await outcome in group {
                switch outcome {
                case .written(let error?) where !Task.isCancelled:
                    logger.info("the glasses stopped showing the answer: \(error)")
                    if onLinkLoss == .abandon && answer == nil {
                        lost = true
                        group.cancelAll()
                    }
                case .written: break
                case .answered(let result): answer = result
                }
            }
            return (answer, lost)
        }
        if Task.isCancelled { throw CancellationError() }
        if lost { throw VoiceFailure.disconnected(while: "answering") }
        guard let answer else { throw CancellationError() }
        return try answer.get()
    }

    /// Where each piece of answer `id` goes as it streams: the turn's first token, the caller's
    /// signal, the glasses' display and their speaker. A typed answer's text form is not written
    /// to the display when its layout will replace it (`showLaidOut`): the glasses show only what
    /// the layout shows, never the plain form (a link's URL, a table's bars) for a moment first.
    static func pieces(
        of id: String, timeline: TurnTimeline, signals: any QueryEvents, stream: AnswerStream?, spoken: SpokenAnswer?
    ) -> @Sendable (AnswerPiece) async -> Void {
        { piece in
            timeline.mark(.firstToken)
            signals.answerDelta(id, piece.text)
            if let shown = streamed(piece) { stream?.append(shown) }
            spoken?.append(piece.spoken)
        }
    }

    /// Whether `answer` is shown laid out in pages rather than as its streamed text.
    static func laysOut(_ answer: TypedAnswer) -> Bool { answer.kind != "text" }

    /// What of `piece` the display shows as it streams: nothing of a text form a layout replaces.
    static func streamed(_ piece: AnswerPiece) -> String? {
        if case .textForm(_, let typed) = piece, laysOut(typed) { return nil }
        return piece.text
    }

    /// An answer with a form (a list, a table, a number...) is shown with its layout, in pages a
    /// tap turns, once its stream has ended; a plain text answer stays as it streamed. Returns
    /// when the pages were shown (nil if they were not: plain text, or the glasses refused).
    @discardableResult
    public static func showLaidOut(
        _ answer: TypedAnswer, on session: any GlassesSession, logger: Logger
    ) async -> ContinuousClock.Instant? {
        guard laysOut(answer) else { return nil }
        do {
            try await session.showPages(AnswerPages.pages(answer, layout: await session.pageLayout()))
            return .now
        } catch {
            logger.info("cannot show the answer's layout on the glasses: \(error)")
            return nil
        }
    }
}
