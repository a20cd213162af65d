// SPDX-License-Identifier: GPL-2.0-or-later

/// One spoken question as it streams in: 8- or 16-bit chunks at 8 or 16 kHz → 16-bit → 16 kHz → denoised 20 ms
/// frames, each judged speech or not, with the start and end of speech reported as they happen.
/// Owned by one task; holds the speex states, freed with it.
public final class UtteranceRecorder {
    public static let frameSize = 320  // 20 ms at 16 kHz
    public static let frameDuration: Duration = .milliseconds(20)
    /// Input bytes handled at a time, so a huge chunk never makes a huge buffer.
    static let slice = 4096

    public let settings: VoiceSettings
    public let input: PCMInput
    private let source: MicrophoneSamples
    /// nil when the glasses send 16 kHz already.
    private let resampler: Resampler?
    private let preprocessor: Preprocessor
    private var gate = EnergyGate()
    private var endpointer: Endpointer
    private var pending: [Int16] = []  // resampled, not yet a whole frame
    private var samples: [Int16] = []  // processed frames
    private var taken = 0  // samples already handed out by takeProcessed()
    private let capacity: Int  // samples kept at most: maximumLength in whole frames
    private var result: Utterance?

    public init(settings: VoiceSettings = VoiceSettings(), input: PCMInput) throws(AudioError) {
        self.settings = settings
        self.input = input
        source = try MicrophoneSamples(input)
        resampler =
            input.samplesRate == Utterance.sampleRate ? nil : try Resampler(from: input.samplesRate, to: Utterance.sampleRate)
        preprocessor = try Preprocessor(
            frameSize: Self.frameSize, sampleRate: Utterance.sampleRate, probStart: Tuning.probStart,
            probContinue: Tuning.probContinue, noiseSuppress: Tuning.noiseSuppress)
        endpointer = Endpointer(settings: settings, frameDuration: Self.frameDuration)
        // Clamped before converting: Int(Double) traps on an absurd setting.
        let frames = (settings.maximumLength / Self.frameDuration).rounded(.up)
        capacity = Int(min(max(frames, 1), 1e9)) * Self.frameSize
    }

    /// Processed audio so far, as time.
    public var elapsed: Duration { endpointer.elapsed }

    /// One chunk of samples, any length. The events it caused, in order; `.ended` comes once, and
    /// everything after it (and after `finish()`) is ignored.
    public func append(_ bytes: [UInt8]) -> [UtteranceEvent] {
        var events: [UtteranceEvent] = []
        var start = 0
        while start < bytes.count, endpointer.ended == nil, result == nil {
            let end = min(bytes.count, start + Self.slice)
            events += append(samples: source.samples(bytes[start..<end]))
            start = end
        }
        return events
    }

    /// Samples already decoded, at the input's rate (`PCMInput.samplesRate`): the audio heard
    /// before the question's recording began (`SpeechOnset.heard`), ahead of its bytes.
    public func append(samples: [Int16]) -> [UtteranceEvent] {
        guard endpointer.ended == nil, result == nil else { return [] }
        pending += resampler?.process(samples) ?? samples
        return drain()
    }

    /// The whole utterance: what the filters still held, and a last partial frame, are included
    /// unless the utterance had already ended. Calling it again returns the same.
    public func finish() -> Utterance {
        if let result { return result }
        if endpointer.ended == nil {
            pending += resampler?.flush() ?? []
            _ = drain()
        }
        if endpointer.ended == nil, !pending.isEmpty {
            // speex takes whole frames only: pad with zeros, keep the real part.
            var frame = pending + [Int16](repeating: 0, count: Self.frameSize - pending.count)
            _ = preprocessor.run(&frame)
            samples += frame.prefix(min(pending.count, capacity - samples.count))
        }
        pending = []
        let utterance = Utterance(samples: samples, speech: endpointer.speech, hasSpeech: endpointer.hasSpeech)
        result = utterance
        return utterance
    }

    /// The utterance so far, without ending it: whole frames processed up to now (what the
    /// filters hold back is not yet in it), for an eager look at its words during a pause.
    public func snapshot() -> Utterance {
        result ?? Utterance(samples: samples, speech: endpointer.speech, hasSpeech: endpointer.hasSpeech)
    }

    /// Ends the utterance here, as if its silence had: the caller found it a finished sentence.
    /// Audio after this is ignored; `finish()` gives the utterance as it stands.
    public func finishNow() {
        endpointer.finishNow()
    }

    /// The processed 16 kHz samples added since the last call, for a caller that streams them on
    /// as they come (the agent's uplink). After `finish()` this includes the last partial frame.
    public func takeProcessed() -> [Int16] {
        defer { taken = samples.count }
        return Array(samples[taken...])
    }

    private func drain() -> [UtteranceEvent] {
        var events: [UtteranceEvent] = []
        var start = 0
        while pending.count - start >= Self.frameSize, endpointer.ended == nil {
            var frame = Array(pending[start..<start + Self.frameSize])
            start += Self.frameSize
            // Both must call it speech: see EnergyGate for why speex's VAD alone is not enough,
            // and Tuning for what speex's adds.
            let loud = gate.push(frame)
            let voiced = preprocessor.run(&frame)
            samples += frame.prefix(capacity - samples.count)
            events += endpointer.push(speech: loud && voiced)
        }
        pending.removeFirst(start)
        return events
    }
}

/// speex's settings, measured on the fixtures under Tests/AudioTests (see the report there).
enum Tuning {
    /// Probabilities (percent) for the VAD to enter and to stay in speech. Speech in the fixtures
    /// scores 88–99 %; after a noise sets in, speex's estimate takes about 2 s to learn it and the
    /// score falls through 60–40 %. Higher thresholds let the utterance end sooner after noise
    /// that begins once the question is asked (the energy gate alone learns it at 2 dB/s):
    /// white noise starting 165 ms after the speech ended the utterance 5.9 s later with the gate
    /// alone, 4.4 s later at 50/35, 2.7 s later at 85/65; no speech fixture changed by more than
    /// one 20 ms frame between 50/35 and 85/65.
    static let probStart: Int32 = 85
    static let probContinue: Int32 = 65
    /// speex's default: at most 15 dB off the noise; deeper starts to colour the voice.
    static let noiseSuppress: Int32 = -15
}
