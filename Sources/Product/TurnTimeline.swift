// SPDX-License-Identifier: GPL-2.0-or-later
import Glasses
import Logging
import Synchronization

/// When each stage of one turn happened, from its start (the glasses began sending the question,
/// or a typed one arrived): kept with the turn, so that a slow one shows where its time went, as a
/// voice agent's per-turn latency report does. Stages are marked from any task; each keeps its
/// first mark.
public final class TurnTimeline: Sendable {
    public enum Stage: String, CaseIterable, Sendable {
        /// The end of the wearer's speech: heard by glassd, or the glasses ended the recording.
        case speechEnd = "speech_end"
        /// The recording went to the speech server.
        case audioSent = "audio_sent"
        case transcript
        /// The model's first piece of the answer.
        case firstToken = "first_token"
        /// The answer's first words written to the glasses, and its end.
        case firstWord = "first_word"
        case lastWord = "last_word"
        /// A spoken answer's first audio written to the glasses' speaker.
        case firstAudio = "first_audio"
    }

    public let started: ContinuousClock.Instant
    private let marks = Mutex<[Stage: Duration]>([:])

    public init(started: ContinuousClock.Instant = .now) {
        self.started = started
    }

    /// Notes `stage` at `instant` unless it was noted already (an instant before the start counts as 0).
    public func mark(_ stage: Stage, at instant: ContinuousClock.Instant = .now) {
        let offset = max(.zero, started.duration(to: instant))
        marks.withLock { if $0[stage] == nil { $0[stage] = offset } }
    }

    /// Each stage noted, in microseconds from the start.
    public var micros: [String: Int64] {
        marks.withLock { marks in
            Dictionary(uniqueKeysWithValues: marks.map { ($0.key.rawValue, Self.micros($0.value)) })
        }
    }

    /// Kept in `turns` (nowhere if nil) as turn `queryID`, with when the glasses showed the
    /// answer (`stream`, then its pages `laidOut` if it has a layout: they are its last words,
    /// and its first when nothing streamed before them) and began to speak it (`spoken`); a
    /// failure to keep it is only logged.
    func keep(
        in turns: (any TurnRecords)?, queryID: String, at unixMS: Int64, stream: AnswerStream?,
        laidOut: ContinuousClock.Instant? = nil, spoken: SpokenAnswer?, logger: Logger
    ) async {
        guard let turns else { return }
        let shown = stream?.shown
        if let first = shown?.first ?? laidOut { mark(.firstWord, at: first) }
        if let last = laidOut ?? shown?.last { mark(.lastWord, at: last) }
        if let first = spoken?.firstAudio { mark(.firstAudio, at: first) }
        let stages = micros
        guard !stages.isEmpty else { return }  // a question refused before anything happened
        do {
            try await turns.keep(queryID: queryID, at: unixMS, stages: stages)
        } catch {
            logger.warning("the turn's timings could not be kept: \(error)")
        }
    }

    static func micros(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1_000_000 + duration.components.attoseconds / 1_000_000_000_000
    }
}

/// Where each turn's timeline is kept (History's turn_timings).
public protocol TurnRecords: Sendable {
    func keep(queryID: String, at unixMS: Int64, stages: [String: Int64]) async throws
}
