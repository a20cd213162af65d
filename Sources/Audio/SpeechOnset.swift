// SPDX-License-Identifier: GPL-2.0-or-later

/// Whether the wearer starts to speak in what the glasses hear while they speak an answer
/// (behind their echo canceller): judged as a question's start is (UtteranceRecorder: energy over
/// the noise floor and speex's VAD, `minimumSpeech` of it without a long gap). What came before
/// is kept, `preroll` of it, so that the question this starts keeps its first words. One owner.
public final class SpeechOnset {
    public let input: PCMInput
    private let settings: VoiceSettings
    private let source: MicrophoneSamples
    private var judge: UtteranceRecorder
    /// Decoded samples at the input's rate: the last `preroll` of them until the speech starts,
    /// then everything since (up to `limit`).
    private var kept: [Int16] = []
    private let prerollCount: Int
    private let limit: Int
    public private(set) var started = false

    /// A judge lives this long without hearing speech, then a new one starts: a recorder ends at
    /// its settings' maximum length, and an answer may be spoken for longer.
    static let judgeSpan: Duration = .seconds(20)

    public init(
        input: PCMInput, settings: VoiceSettings = VoiceSettings(minimumSpeech: .milliseconds(250)),
        preroll: Duration = .milliseconds(1500)
    ) throws(AudioError) {
        self.input = input
        self.settings = settings
        source = try MicrophoneSamples(input)
        judge = try Self.judge(input, settings)
        prerollCount = Self.samples(preroll, at: input.samplesRate)
        limit = Self.samples(preroll + settings.maximumLength, at: input.samplesRate)
    }

    /// Adds what the glasses heard; true once, when it finds the wearer speaking.
    public func append(_ bytes: [UInt8]) -> Bool {
        let samples = source.samples(bytes[...])
        kept += samples.prefix(max(0, limit - kept.count))
        guard !started else { return false }
        // Amortised: the front is cut once it holds twice what is kept.
        if kept.count > 2 * prerollCount { kept.removeFirst(kept.count - prerollCount) }
        if judge.append(samples: samples).contains(.speechStarted) {
            started = true
            if kept.count > prerollCount { kept.removeFirst(kept.count - prerollCount) }
            return true
        }
        if judge.elapsed >= Self.judgeSpan, let fresh = try? Self.judge(input, settings) { judge = fresh }
        return false
    }

    /// What was heard from `preroll` before the speech started on, decoded, at the input's
    /// rate (`UtteranceRecorder.append(samples:)` takes it); empty until it started.
    public var heard: [Int16] {
        guard started else { return [] }
        return kept
    }

    private static func judge(_ input: PCMInput, _ settings: VoiceSettings) throws(AudioError) -> UtteranceRecorder {
        var long = settings
        long.maximumLength = judgeSpan + .seconds(5)
        return try UtteranceRecorder(settings: long, input: PCMInput(sampleRate: input.samplesRate, bits: 16))
    }

    private static func samples(_ duration: Duration, at rate: Int) -> Int {
        Int(duration / .seconds(1) * Double(rate))
    }
}
