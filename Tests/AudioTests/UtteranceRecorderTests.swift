// SPDX-License-Identifier: GPL-2.0-or-later
import Audio
import Testing

/// The recorder on the recorded fixtures, fed as the Monocle sends them: 244-byte dat: chunks.
@Suite("Utterance recorder", .timeLimit(.minutes(5)))
struct UtteranceRecorderTests {
    struct Run {
        var events: [(UtteranceEvent, Duration)] = []  // with the audio fed when it came
        var utterance: Utterance
        func at(_ event: UtteranceEvent) -> Duration? { events.first { $0.0 == event }?.1 }
        /// The start and the end, without the pauses inside.
        var bounds: [UtteranceEvent] { events.map(\.0).filter { ![.paused, .pausedLong, .resumed].contains($0) } }
        /// The pauses: each but the last one resumed, in turn.
        var pausesWellFormed: Bool {
            let inside = events.map(\.0).filter { $0 == .paused || $0 == .resumed }
            return inside.enumerated().allSatisfy { $0.element == ($0.offset % 2 == 0 ? .paused : .resumed) }
        }
    }

    private func record(
        _ bytes: [UInt8], chunk: Int = 244, settings: VoiceSettings = VoiceSettings()
    ) throws -> Run {
        let recorder = try UtteranceRecorder(settings: settings, input: PCMInput(sampleRate: 8_000, bits: 8))
        var events: [(UtteranceEvent, Duration)] = []
        var start = 0
        while start < bytes.count {
            let end = min(bytes.count, start + chunk)
            for event in recorder.append(Array(bytes[start..<end])) {
                events.append((event, Fixture.duration(bytes: end)))
            }
            start = end
        }
        return Run(events: events, utterance: recorder.finish())
    }

    /// Tolerances: the start is reported once `minimumSpeech` of speech is heard, at most 350 ms
    /// after that counted from the true onset (a weak first syllable under noise is missed);
    /// the end at most 150 ms past the trailing silence (two 20 ms hangover frames, the last
    /// 244-byte chunk of 30.5 ms, the resampler's 3 ms and a frame's 20 ms).
    @Test(
        "speech is found, and its end reported after the trailing silence",
        arguments: ["speech-clean", "speech-noisy"])
    func speech(_ name: String) throws {
        let bytes = try Fixture.bytes(name)
        let speechEnd = Fixture.duration(bytes: bytes.count) - Fixture.trailingPad
        let settings = VoiceSettings()
        let run = try record(bytes)
        #expect(run.bounds == [.speechStarted, .ended(.silence)])
        #expect(run.pausesWellFormed)
        // The last pause is heard `pauseSilence` into the silence that ends it.
        let lastPause = try #require(run.events.last { $0.0 == .paused }?.1)
        #expect(lastPause >= speechEnd + settings.pauseSilence)
        #expect(lastPause <= speechEnd + settings.pauseSilence + .milliseconds(150))
        let started = try #require(run.at(.speechStarted))
        #expect(started >= Fixture.speechStart + settings.minimumSpeech)
        #expect(started <= Fixture.speechStart + settings.minimumSpeech + .milliseconds(350))
        let ended = try #require(run.at(.ended(.silence)))
        #expect(ended >= speechEnd + settings.trailingSilence)
        #expect(ended <= speechEnd + settings.trailingSilence + .milliseconds(150))

        let u = run.utterance
        #expect(u.hasSpeech)
        // The recording stops at the end: everything up to it, nothing after.
        #expect(u.duration <= ended && u.duration > ended - .milliseconds(100))
        #expect(u.duration == .nanoseconds(u.samples.count * 62_500))  // 16 kHz
        // The question lasts 3.34 s; its pauses and weak consonants are not speech.
        #expect(u.speech >= .milliseconds(2000) && u.speech <= .milliseconds(3400))
        #expect(u.wav().count == 44 + 2 * u.samples.count)
    }

    @Test("silence and noise alone hold no speech", arguments: ["silence", "noise"])
    func noSpeech(_ name: String) throws {
        let bytes = try Fixture.bytes(name)
        let run = try record(bytes)
        #expect(run.events.isEmpty)
        #expect(!run.utterance.hasSpeech)
        #expect(run.utterance.speech < VoiceSettings().minimumSpeech)
        // Never ended, so all of it, flushed: exactly twice the samples at twice the rate.
        #expect(run.utterance.samples.count == 2 * bytes.count)
        #expect(run.utterance.duration == Fixture.duration(bytes: bytes.count))
    }

    @Test("denoising lowers the noise")
    func denoised() throws {
        let bytes = try Fixture.bytes("noise")
        let samples = try record(bytes).utterance.samples
        func power(_ s: ArraySlice<Int16>) -> Double {
            s.reduce(0) { $0 + Double($1) * Double($1) } / Double(s.count)
        }
        let input = PCM8.widen(bytes)
        // After speex has learnt the noise (its last second), at least 10 dB down (measured: 14 dB).
        #expect(power(samples.suffix(16_000)) * 10 < power(input.suffix(8_000)))
    }

    /// Noise that sets in after the question: the energy gate alone learns it at 2 dB/s; speex's
    /// VAD learns it within ~2 s, which ends the utterance.
    @Test("noise that starts after the speech still lets it end")
    func noiseAfterSpeech() throws {
        let noise = try Fixture.bytes("noise")
        var bytes = try Fixture.bytes("speech-clean") + [UInt8](repeating: 0, count: 8_000 * 6)
        let onset = 36_000  // 4.5 s, 165 ms after the speech
        for i in onset..<bytes.count {
            let sum = Int(Int8(bitPattern: bytes[i])) + Int(Int8(bitPattern: noise[(i - onset) % noise.count]))
            bytes[i] = UInt8(bitPattern: Int8(clamping: sum))
        }
        let run = try record(bytes)
        #expect(run.bounds == [.speechStarted, .ended(.silence)])
        let ended = try #require(run.at(.ended(.silence)))
        #expect(ended < Fixture.duration(bytes: onset) + .seconds(4))
    }

    @Test("the maximum length ends it; what follows is dropped")
    func maximumLength() throws {
        let bytes = try Fixture.bytes("speech-noisy")
        let run = try record(bytes, settings: VoiceSettings(maximumLength: .seconds(2)))
        #expect(run.bounds == [.speechStarted, .ended(.maximumLength)])
        #expect(run.utterance.samples.count == 32_000)
        #expect(run.utterance.duration == .seconds(2))
        #expect(run.utterance.hasSpeech)
    }

    @Test("how the input is split changes nothing but when events are seen")
    func chunking() throws {
        let bytes = try Fixture.bytes("speech-noisy")
        let reference = try record(bytes)
        for chunk in [1, 7, 250, 1_000_000] {
            let run = try record(bytes, chunk: chunk)
            #expect(run.utterance == reference.utterance, "chunk \(chunk)")
            #expect(run.events.map(\.0) == reference.events.map(\.0), "chunk \(chunk)")
        }
    }

    @Test("takeProcessed hands out each processed sample once, the last partial frame after finish")
    func takeProcessed() throws {
        let bytes = try Fixture.bytes("speech-clean")
        let recorder = try UtteranceRecorder(settings: VoiceSettings(maximumLength: .seconds(60)), input: PCMInput(sampleRate: 8_000, bits: 8))
        var taken: [Int16] = []
        var start = 0
        while start < bytes.count {
            let end = min(bytes.count, start + 244)
            _ = recorder.append(Array(bytes[start..<end]))
            taken += recorder.takeProcessed()
            start = end
        }
        taken += recorder.takeProcessed()  // nothing new: empty
        let u = recorder.finish()
        taken += recorder.takeProcessed()
        #expect(taken == u.samples)
        #expect(recorder.takeProcessed().isEmpty)

        // Under one frame: nothing until finish() pads and processes it.
        let short = try UtteranceRecorder(settings: VoiceSettings(), input: PCMInput(sampleRate: 8_000, bits: 8))
        _ = short.append([UInt8](repeating: 0x10, count: 100))
        #expect(short.takeProcessed().isEmpty)
        let tail = short.finish()
        #expect(!tail.samples.isEmpty)
        #expect(short.takeProcessed() == tail.samples)
    }

    @Test("a snapshot is the utterance so far and ends nothing; finishNow ends it there, and nothing after counts")
    func snapshotAndFinishNow() throws {
        let bytes = try Fixture.bytes("speech-clean")
        let recorder = try UtteranceRecorder(settings: VoiceSettings(), input: PCMInput(sampleRate: 8_000, bits: 8))
        let first = recorder.append(Array(bytes.prefix(16_000)))  // 2 s, speech from 1 s
        #expect(first.contains(.speechStarted))
        let snapshot = recorder.snapshot()
        #expect(snapshot.hasSpeech)
        #expect(snapshot.samples.count % UtteranceRecorder.frameSize == 0)
        #expect(snapshot.samples.count > 31_000 && snapshot.samples.count <= 32_000)  // whole frames of 2 s
        _ = recorder.append(Array(bytes[16_000..<20_000]))
        #expect(recorder.snapshot().samples.count > snapshot.samples.count, "it went on")
        let kept = recorder.snapshot().samples.count
        recorder.finishNow()
        #expect(recorder.append(Array(bytes[20_000...])) == [])
        let u = recorder.finish()
        #expect(u.samples.count == kept)
        #expect(recorder.snapshot() == u)
    }

    @Test("empty, odd and huge inputs; nothing after the end or after finish")
    func robustness() throws {
        let empty = try UtteranceRecorder(settings: VoiceSettings(), input: PCMInput(sampleRate: 8_000, bits: 8))
        #expect(empty.append([]) == [])
        let nothing = empty.finish()
        #expect(nothing.samples.isEmpty && nothing.duration == .zero && !nothing.hasSpeech)
        #expect(empty.append([1, 2, 3]) == [])
        #expect(empty.finish() == nothing)

        let odd = try UtteranceRecorder(settings: VoiceSettings(), input: PCMInput(sampleRate: 8_000, bits: 8))
        #expect(odd.append([0x7F]) == [])
        #expect(odd.append([0x80, 0x00, 0x7F]) == [])
        #expect(odd.finish().samples.count == 8)

        // 40 s of random bytes in one chunk: capped at 30 s, whatever the VAD made of it.
        var generator = SystemRandomNumberGenerator()
        let huge = (0..<320_000).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let recorder = try UtteranceRecorder(settings: VoiceSettings(), input: PCMInput(sampleRate: 8_000, bits: 8))
        let events = recorder.append(huge)
        #expect(events.filter { if case .ended = $0 { true } else { false } }.count == 1)
        #expect(recorder.append(huge) == [])
        let u = recorder.finish()
        #expect(u.samples.count <= 30 * 16_000)
    }
}
