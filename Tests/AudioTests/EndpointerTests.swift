// SPDX-License-Identifier: GPL-2.0-or-later
import Audio
import Testing

@Suite("Endpointer", .timeLimit(.minutes(5)))
struct EndpointerTests {
    /// Pushes the flags; each event with the 1-based number of the frame that caused it. The
    /// tests' own pause (8 frames), not the default's.
    private func run(
        _ flags: [Bool], _ settings: VoiceSettings = VoiceSettings(pauseSilence: .milliseconds(160))
    ) -> (Endpointer, [Int: [UtteranceEvent]]) {
        var endpointer = Endpointer(settings: settings, frameDuration: .milliseconds(20))
        var events: [Int: [UtteranceEvent]] = [:]
        for (i, flag) in flags.enumerated() {
            let new = endpointer.push(speech: flag)
            if !new.isEmpty { events[i + 1] = new }
        }
        return (endpointer, events)
    }

    private func frames(_ flag: Bool, _ count: Int) -> [Bool] { Array(repeating: flag, count: count) }

    @Test("speech, then silence: started at the minimum, paused after the pause silence, ended after exactly the trailing silence")
    func speechThenSilence() {
        let (e, events) = run(frames(true, 50) + frames(false, 100))
        // 200 ms = 10 frames; 160 ms = 8 and 800 ms = 40 frames of silence after frame 50.
        // 650 ms (the statement pause) = 33 frames.
        #expect(events == [10: [.speechStarted], 58: [.paused], 83: [.pausedLong], 90: [.ended(.silence)]])
        #expect(e.speechStart == .zero)
        #expect(e.speech == .seconds(1))
        #expect(e.elapsed == .milliseconds(1800))
        #expect(e.hasSpeech)
    }

    @Test("speech within the trailing silence keeps the utterance going: a pause, then a resumption")
    func pauseInside() {
        let flags = frames(false, 5) + frames(true, 20) + frames(false, 39) + frames(true, 5) + frames(false, 40)
        let (_, events) = run(flags)
        #expect(events == [
            15: [.speechStarted], 33: [.paused], 58: [.pausedLong], 65: [.resumed], 77: [.paused], 102: [.pausedLong],
            109: [.ended(.silence)],
        ])
    }

    @Test("a gap shorter than the pause silence is no pause; each pause is reported once")
    func shortGaps() {
        let flags = frames(true, 20) + frames(false, 7) + frames(true, 5) + frames(false, 20) + frames(true, 1)
        let (_, events) = run(flags)
        #expect(events == [10: [.speechStarted], 40: [.paused], 53: [.resumed]])
    }

    @Test("no pause when the pause silence is not shorter than the trailing silence (eager look off)")
    func pauseOff() {
        let off = VoiceSettings(trailingSilence: .milliseconds(300), pauseSilence: .milliseconds(300))
        #expect(run(frames(true, 20) + frames(false, 20), off).1 == [10: [.speechStarted], 35: [.ended(.silence)]])
    }

    @Test("finishNow ends it at once, as finished; nothing after counts")
    func finishNow() {
        var e = Endpointer(settings: VoiceSettings(), frameDuration: .milliseconds(20))
        var all: [UtteranceEvent] = []
        for flag in frames(true, 20) + frames(false, 10) { all += e.push(speech: flag) }
        e.finishNow()
        for flag in frames(true, 20) + frames(false, 50) { all += e.push(speech: flag) }
        #expect(all == [.speechStarted, .paused])
        #expect(e.ended == .finished)
        #expect(e.elapsed == .milliseconds(600))
    }

    @Test("a click shorter than the minimum never starts, nor do clicks further apart than the gap")
    func clicks() {
        var flags = frames(false, 10)
        for _ in 0..<20 { flags += frames(true, 9) + frames(false, 16) }  // 180 ms clicks, 320 ms apart
        let (e, events) = run(flags + frames(false, 200))
        #expect(events.isEmpty)
        #expect(!e.hasSpeech)
        #expect(e.speechStart == nil)
        #expect(e.speech == .milliseconds(20 * 9 * 20))  // the clicks still count as VAD speech
    }

    @Test("speech broken by short gaps adds up, and starts where it began")
    func bridged() {
        let (e, events) = run(frames(false, 25) + frames(true, 5) + frames(false, 15) + frames(true, 5))
        #expect(events == [50: [.speechStarted]])
        #expect(e.speechStart == .milliseconds(500))
    }

    @Test("the maximum length ends it, speaking or not")
    func maximumLength() {
        let (_, speaking) = run(frames(true, 2000))
        #expect(speaking == [10: [.speechStarted], 1500: [.ended(.maximumLength)]])
        let short = VoiceSettings(maximumLength: .milliseconds(170))
        #expect(run(frames(true, 20), short).1 == [9: [.ended(.maximumLength)]])
        let exact = VoiceSettings(maximumLength: .milliseconds(200))
        #expect(run(frames(true, 20), exact).1 == [10: [.speechStarted, .ended(.maximumLength)]])
    }

    @Test("silence only: never ends by silence, has no speech")
    func silenceOnly() {
        let (e, events) = run(frames(false, 2000))
        #expect(events == [1500: [.ended(.maximumLength)]])
        #expect(!e.hasSpeech)
        #expect(e.speech == .zero)
        #expect(e.elapsed == .seconds(30))
    }

    @Test("nothing after the end; one .ended")
    func afterEnd() {
        var e = Endpointer(settings: VoiceSettings(), frameDuration: .milliseconds(20))
        var all: [UtteranceEvent] = []
        for flag in frames(true, 20) + frames(false, 40) + frames(true, 100) { all += e.push(speech: flag) }
        #expect(all == [.speechStarted, .paused, .pausedLong, .ended(.silence)])
        #expect(e.elapsed == .milliseconds(1200))
        #expect(e.ended == .silence)
    }

    @Test("a longer pause is reported once after the pause, not without one, and again after speech")
    func pausedLong() {
        let s = VoiceSettings(pauseSilence: .milliseconds(100), statementSilence: .milliseconds(300))
        let flags = frames(true, 20) + frames(false, 16) + frames(true, 5) + frames(false, 40)
        // 100 ms = 5 frames, 300 ms = 15, 800 ms = 40 of silence.
        #expect(run(flags, s).1 == [10: [.speechStarted], 25: [.paused], 35: [.pausedLong], 37: [.resumed], 46: [.paused], 56: [.pausedLong], 81: [.ended(.silence)]])
        // Not below the trailing silence, or with no pause before it (eager look off): none.
        let never = VoiceSettings(pauseSilence: .milliseconds(800), statementSilence: .milliseconds(300))
        #expect(run(frames(true, 20) + frames(false, 40), never).1 == [10: [.speechStarted], 60: [.ended(.silence)]])
        let late = VoiceSettings(pauseSilence: .milliseconds(100), statementSilence: .milliseconds(800))
        #expect(run(frames(true, 20) + frames(false, 40), late).1 == [10: [.speechStarted], 25: [.paused], 60: [.ended(.silence)]])
    }

    @Test("other settings")
    func settings() {
        let s = VoiceSettings(
            trailingSilence: .milliseconds(300), minimumSpeech: .milliseconds(100), maximumLength: .seconds(5))
        // The default pause: 100 ms = 5 frames.
        #expect(run(frames(true, 5) + frames(false, 30), s).1 == [5: [.speechStarted], 10: [.paused], 20: [.ended(.silence)]])
        // Zero minimum and trailing silence: the first speech frame starts, the first silent one ends.
        let zero = VoiceSettings(trailingSilence: .zero, minimumSpeech: .zero)
        let flags = frames(false, 3) + frames(true, 3) + frames(false, 3)
        #expect(run(flags, zero).1 == [4: [.speechStarted], 7: [.ended(.silence)]])
    }
}
