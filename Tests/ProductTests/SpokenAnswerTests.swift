// SPDX-License-Identifier: GPL-2.0-or-later
import Glasses
import Logging
import Product
import Testing

/// An answer spoken as it streams, on a speaker and with a voice in memory.
@Suite("Spoken answers on the glasses' speaker", .timeLimit(.minutes(5)))
struct SpokenAnswerTests {
    static let logger = Logger(label: "test")

    /// The sentence numbers (from 1) of the speaker's bytes, in order, each once.
    static func order(_ writes: [[UInt8]]) -> [UInt8] {
        writes.flatMap { $0 }.reduce(into: []) { out, byte in if out.last != byte { out.append(byte) } }
    }

    @Test("each sentence in order as the answer streams, all of it written, then played out (finish, not stop)")
    func inOrderThenFinished() async {
        let voice = FakeVoice()
        let speaker = FakeSpeaker(voice: voice)
        let spoken = SpokenAnswer(speaker: speaker, voice: voice, volume: 40, logger: Self.logger)
        async let report = spoken.run()
        for piece in ["Paris is the cap", "ital. It is in ", "France! And big"] { spoken.append(piece) }
        spoken.finish()
        let said = await report
        #expect(voice.sentences == ["Paris is the capital.", "It is in France!", "And big"])
        let record = speaker.now
        #expect(record.volume == 40)
        #expect(Self.order(record.writes) == [1, 2, 3])
        #expect(record.writes.count == 6, "both pieces of each sentence")
        #expect(record.finished == 1 && record.stopped == 0)
        #expect(said == SpeakerReport(written: 24, played: .zero, cut: false, device: ""))
        #expect(spoken.spoken == voice.sentences)
    }

    @Test("the voice works at most one sentence ahead of the speaker")
    func voiceOneAhead() async {
        let voice = FakeVoice(hold: true)
        let speaker = FakeSpeaker(voice: voice)
        let spoken = SpokenAnswer(speaker: speaker, voice: voice, volume: 60, logger: Self.logger)
        async let report = spoken.run()
        spoken.append("One. Two. Three. Four. ")
        spoken.finish()
        // The speaker holds in the first sentence (its voice has not made the rest): the voice
        // may make the second, not the third.
        await speaker.wait { $0.writes.count == 1 }
        await voice.waitAsked(2)
        voice.release()
        _ = await report
        let record = speaker.now
        #expect(Self.order(record.writes) == [1, 2, 3, 4])
        #expect(voice.sentences.count == 4)
        // Write w of sentence n came with at most n + 1 sentences asked of the voice.
        let bySentence = record.writes.map { Int($0[0]) }
        for (sentence, voiced) in zip(bySentence, record.voicedAtWrite) {
            #expect(voiced <= sentence + 1, "sentence \(sentence) written with \(voiced) voiced: \(record.voicedAtWrite)")
        }
    }

    @Test("cancel: nothing more is written, the speaker is stopped at once, the voice asked for nothing more")
    func cancelStops() async {
        let voice = FakeVoice(hold: true)
        let speaker = FakeSpeaker(voice: voice)
        let spoken = SpokenAnswer(speaker: speaker, voice: voice, volume: 60, logger: Self.logger)
        async let report = spoken.run()
        spoken.append("One. Two. Three. ")
        await speaker.wait { $0.writes.count == 1 }
        spoken.cancel()
        voice.release()
        let said = await report
        let record = speaker.now
        #expect(record.writes.count == 1)
        #expect(record.stopped == 1 && record.finished == 0)
        #expect(said?.cut == true)
        #expect(voice.sentences.count <= 2)
        #expect(spoken.spoken == ["One."])
        #expect(!spoken.wasCutByWearer, "a failed answer's speech stopped: not the wearer's cut, nothing kept as cut")
    }

    @Test("SpeechCut from the speaker (a tap): everything stops, what was under way is what was spoken")
    func cutBySpeaker() async {
        let voice = FakeVoice()
        let speaker = FakeSpeaker(voice: voice, cutAt: 3)
        let spoken = SpokenAnswer(speaker: speaker, voice: voice, volume: 60, logger: Self.logger)
        async let report = spoken.run()
        spoken.append("One. Two. Three. Four. Five.")
        spoken.finish()
        let said = await report
        let record = speaker.now
        #expect(Self.order(record.writes) == [1], "nothing after the cut: \(record.writes)")
        #expect(record.writes.count == 2)
        #expect(record.stopped == 1 && record.finished == 0)
        #expect(said?.cut == true)
        #expect(voice.sentences.count <= 3)
        #expect(spoken.spoken == ["One.", "Two."])
        #expect(spoken.wasCutByWearer, "a tap on the glasses cut it")
    }

    @Test("no words: nothing said, the speaker never started")
    func nothingToSay() async {
        let voice = FakeVoice()
        let speaker = FakeSpeaker(voice: voice)
        let spoken = SpokenAnswer(speaker: speaker, voice: voice, volume: 60, logger: Self.logger)
        async let report = spoken.run()
        spoken.append("  ")
        spoken.finish()
        #expect(await report == nil)
        #expect(speaker.now.volume == nil)
        #expect(voice.sentences.isEmpty)
    }
}
