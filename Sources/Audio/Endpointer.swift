// SPDX-License-Identifier: GPL-2.0-or-later

public enum UtteranceEvent: Sendable, Equatable {
    case speechStarted
    /// `pauseSilence` of silence after speech: the speaker may be done (or only pausing).
    case paused
    /// `statementSilence` of silence after speech: a sentence that is not a question may be over.
    case pausedLong
    /// Speech again after `.paused`: what was said before the pause was not all.
    case resumed
    case ended(EndReason)
}

/// `.finished`: the caller ended it (`finishNow`), judging what was said a whole sentence.
public enum EndReason: Sendable, Equatable { case silence, maximumLength, finished }

/// Where an utterance starts and ends, from one speech/silence flag per frame of fixed length.
/// Speech starts once `minimumSpeech` of speech frames have come with no gap over `startGap`
/// between them: a click is shorter, and a first word split by a weak consonant still counts
/// from its beginning (in the noisy fixture "What's the" is about 180 ms of speech, 180 ms not, then
/// speech). Once started, `pauseSilence` of silence reports a pause (a caller may look at the
/// words so far and end it then), speech after it a resumption; `trailingSilence` of unbroken
/// silence ends it; `maximumLength` of frames ends it in any case.
public struct Endpointer: Sendable, Equatable {
    public let settings: VoiceSettings
    public let frameDuration: Duration
    public let startGap: Duration
    /// Frames pushed so far, as time.
    public private(set) var elapsed: Duration = .zero
    /// Frames flagged speech so far, as time (clicks included).
    public private(set) var speech: Duration = .zero
    /// Where the speech that started the utterance began; nil until it has.
    public private(set) var speechStart: Duration?
    public private(set) var ended: EndReason?
    private var candidate: Duration?  // where the speech now adding up began, before the start
    private var collected: Duration = .zero  // speech since `candidate`
    private var silence: Duration = .zero  // unbroken silence, up to now
    private var pausing = false  // `.paused` was reported for the silence now going on
    private var pausingLong = false  // and `.pausedLong`

    public init(settings: VoiceSettings, frameDuration: Duration, startGap: Duration = .milliseconds(300)) {
        self.settings = settings
        self.frameDuration = frameDuration
        self.startGap = startGap
    }

    public var hasSpeech: Bool { speechStart != nil }

    /// One frame's flag; the events it causes, in order. Nothing after the end.
    public mutating func push(speech isSpeech: Bool) -> [UtteranceEvent] {
        guard ended == nil else { return [] }
        var events: [UtteranceEvent] = []
        let frameStart = elapsed
        elapsed += frameDuration
        silence = isSpeech ? .zero : silence + frameDuration
        if isSpeech { speech += frameDuration }
        if speechStart == nil {
            if isSpeech {
                if candidate == nil { candidate = frameStart }
                collected += frameDuration
                if collected >= settings.minimumSpeech {
                    speechStart = candidate
                    events.append(.speechStarted)
                }
            } else if silence > startGap {
                candidate = nil
                collected = .zero
            }
        } else if isSpeech {
            if pausing { events.append(.resumed) }
            pausing = false
            pausingLong = false
        } else {
            if !pausing && silence >= settings.pauseSilence && settings.pauseSilence < settings.trailingSilence {
                pausing = true
                events.append(.paused)
            }
            if pausing && !pausingLong && silence >= settings.statementSilence
                && settings.statementSilence < settings.trailingSilence
            {
                pausingLong = true
                events.append(.pausedLong)
            }
            if silence >= settings.trailingSilence { ended = .silence }
        }
        if ended == nil && elapsed >= settings.maximumLength { ended = .maximumLength }
        if let ended { events.append(.ended(ended)) }
        return events
    }

    /// Ends it now (nothing after counts), as if by silence: the caller judged it finished.
    public mutating func finishNow() {
        if ended == nil { ended = .finished }
    }
}
