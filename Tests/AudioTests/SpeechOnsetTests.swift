// SPDX-License-Identifier: GPL-2.0-or-later
import Audio
import Testing

/// The ear that listens while the glasses speak: the fixtures' question as the wearer's voice,
/// and the same voice far quieter as what an echo canceller leaves of the answer's own speech.
@Suite("Speech onset (barge-in)", .timeLimit(.minutes(5)))
struct SpeechOnsetTests {
    static let input = PCMInput(sampleRate: 8_000, bits: 16)

    /// The 8-bit fixture as 16-bit samples scaled by `gain`, little-endian.
    private func pcm16(_ name: String, gain: Double = 1) throws -> [Int16] {
        try Fixture.bytes(name).map { Int16(clamping: Int((Double(Int8(bitPattern: $0)) * 256 * gain).rounded())) }
    }

    private func bytes(_ samples: [Int16]) -> [UInt8] {
        samples.flatMap { [UInt8(truncatingIfNeeded: $0), UInt8(truncatingIfNeeded: $0 >> 8)] }
    }

    /// Feeds `samples` in 20 ms chunks; the sample count at which the onset came, if it did.
    private func listen(_ onset: SpeechOnset, _ samples: [Int16]) -> Int? {
        var at: Int?
        for start in stride(from: 0, to: samples.count, by: 160) {
            let chunk = Array(samples[start..<min(samples.count, start + 160)])
            if onset.append(bytes(chunk)) {
                #expect(at == nil, "the onset came twice")
                at = start + chunk.count
            }
        }
        return at
    }

    @Test("the wearer's voice is heard once, after enough speech; what came before it is kept")
    func voice() throws {
        let speech = try pcm16("speech-clean")
        let onset = try SpeechOnset(input: Self.input)
        #expect(onset.heard.isEmpty)
        let at = try #require(listen(onset, speech))
        let start = Int(Fixture.speechStart / .seconds(1) * 8_000)
        // 250 ms of speech, and at most 350 ms more for a weak first syllable and the filters.
        #expect(at >= start + 2_000 && at <= start + 4_800, "heard at sample \(at)")
        #expect(onset.started)
        let heard = onset.heard
        // From 1.5 s before the onset (the question's start with it; here the fixture's start) to
        // the end of what came.
        let from = max(0, at - 12_000)
        #expect(heard == Array(speech[from...]))
        #expect(from < start)
    }

    @Test("an echo left 47 dB down (an echo canceller's residue) and noise alone are not the wearer")
    func echoAndNoise() throws {
        for (name, gain) in [("speech-clean", 0.0045), ("speech-noisy", 0.0045), ("noise", 1.0), ("silence", 1.0)] {
            let onset = try SpeechOnset(input: Self.input)
            #expect(listen(onset, try pcm16(name, gain: gain)) == nil, "\(name) at \(gain)")
            #expect(onset.heard.isEmpty)
        }
        // Without the canceller the echo (12 dB down) would stop the answer: the ear is not deaf.
        let loud = try SpeechOnset(input: Self.input)
        #expect(listen(loud, try pcm16("speech-clean", gain: 0.25)) != nil)
    }

    @Test("a voice after a long stretch of answer (past one judge's span) is still heard")
    func longAnswer() throws {
        let onset = try SpeechOnset(input: Self.input)
        let quiet = [Int16](repeating: 0, count: 8_000 * 45)
        #expect(listen(onset, quiet) == nil)
        #expect(listen(onset, try pcm16("speech-clean")) != nil)
        #expect(onset.heard.count >= 12_000)
    }

    @Test("LC3 at 16 kHz, as Halo overhears: decoded, judged, kept decoded")
    func lc3() throws {
        let format = try LC3Format(sampleRate: 16_000, frameDuration: .ms10, frameBytes: 40)
        let encoder = try LC3Encoder(format: format)
        // 8 kHz to 16 kHz, each sample twice: enough for a voice to stay a voice.
        let coded = encoder.encode(try pcm16("speech-clean").flatMap { [$0, $0] }) + encoder.flush()
        let onset = try SpeechOnset(input: PCMInput(lc3: format))
        var heardAt: Int?
        for start in stride(from: 0, to: coded.count, by: 37) where heardAt == nil {
            if onset.append(Array(coded[start..<min(coded.count, start + 37)])) { heardAt = start }
        }
        let at = try #require(heardAt)
        // At 4,000 bytes a second the speech starts at byte 4,000.
        #expect(at > 4_000 && at < 6_400, "heard at byte \(at)")
        // All that was decoded (less liblc3's delay), at most 1.5 s at 16 kHz: the speech's start with it.
        #expect(onset.heard.count >= at * 4 - 1_000 && onset.heard.count <= 24_000, "kept \(onset.heard.count)")
    }
}
