// SPDX-License-Identifier: GPL-2.0-or-later
import Audio
import Glasses
@testable import Product
import Testing

@Suite("Questions from the glasses", .timeLimit(.minutes(5)))
struct VoiceQueriesTests {
    @Test("a transcript of markers and punctuation only holds no words", arguments: [
        ("", true), ("  ", true), ("[BLANK_AUDIO]", true), (" (silence) ", true), ("[Music] ...", true),
        ("what is the time", false), ("[slow] what is the time", false), ("42", false), ("¿Qué?", false),
    ])
    func heardNothing(text: String, nothing: Bool) {
        #expect(VoiceQueries<ContinuousClock>.heardNothing(text) == nothing)
    }

    @Test("the glasses' recording format is the recorder's input: µ-law stays µ-law, PCM linear, LC3 its frames")
    func recordingInput() throws {
        #expect(try PCMInput(AudioFormat(sampleRate: 16_000, bits: 8, codec: .muLaw)) == PCMInput(sampleRate: 16_000, bits: 8, muLaw: true))
        #expect(try PCMInput(AudioFormat(sampleRate: 16_000, bits: 8)) == PCMInput(sampleRate: 16_000, bits: 8))
        let lc3 = try PCMInput(AudioFormat(sampleRate: 16_000, bits: 16, codec: .lc3(frameBytes: 40, frameMicros: 10_000)))
        #expect(lc3.lc3?.frameBytes == 40 && !lc3.muLaw)
    }
}
