// SPDX-License-Identifier: GPL-2.0-or-later
import AssistantEngine
import Concurrency
import Synchronization

/// The question so far, sent for transcription at a pause in it, before the turn is known to be
/// over: if its words read as a finished sentence the turn ends at once with them; if the wearer
/// says nothing more they are the question's (no second request); if the wearer goes on, it is
/// dropped and its request cancelled. A failure only leaves the question to the usual request.
final class EagerTranscript: Sendable {
    private struct State {
        var sentAt: ContinuousClock.Instant?
        var doneAt: ContinuousClock.Instant?
        var text: String?
    }

    /// Which of the capture's pauses it was sent at, counted from 1.
    let number: Int
    /// When the pause was heard: where the wearer's speech ended if it is the last.
    let pausedAt: ContinuousClock.Instant
    private let state = Mutex(State())
    private let done = OneShotEvent()
    private let dropped = OneShotEvent()

    init(number: Int, pausedAt: ContinuousClock.Instant = .now) {
        self.number = number
        self.pausedAt = pausedAt
    }

    /// Transcribes `wav`, unless dropped first; nil text on failure.
    func run(_ client: TranscriptionClient, wav: [UInt8]) async {
        state.withLock { $0.sentAt = .now }
        let text = await withTaskGroup(of: String?.self) { group in
            group.addTask { try? await client.transcribe(wav: wav, task: .transcribe) }
            group.addTask {
                await self.dropped.wait()
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        state.withLock {
            $0.text = dropped.hasFired ? nil : text
            $0.doneAt = .now
        }
        done.fire()
    }

    /// The speech went on, or the question is gone: its request is cancelled, its text unused.
    func drop() { dropped.fire() }

    /// The text, once back; nil while pending, and after a failure or a drop.
    var text: String? { state.withLock { $0.text } }

    /// Waits until it is back (bounded by its client's timeout) and returns the text with when it
    /// was sent and came back; nil if it failed, was dropped, or the waiting task was cancelled.
    func transcript() async -> (text: String, sent: ContinuousClock.Instant, back: ContinuousClock.Instant)? {
        await done.wait()
        return state.withLock { s in
            guard let text = s.text, let sent = s.sentAt, let back = s.doneAt else { return nil }
            return (text, sent, back)
        }
    }
}

/// A question's eager transcript as its recording ended (nil: none left to use), and how many
/// were asked for.
struct EagerUse: Sendable {
    let transcript: EagerTranscript?
    let requests: Int
}
