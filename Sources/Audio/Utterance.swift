// SPDX-License-Identifier: GPL-2.0-or-later

/// A spoken question, processed: what is sent for transcription, or not if it holds no speech.
public struct Utterance: Sendable, Equatable {
    public static let sampleRate = 16_000

    /// 16 kHz mono, denoised.
    public var samples: [Int16]
    public var duration: Duration
    /// How much of it the VAD called speech.
    public var speech: Duration
    /// False: empty or silent; no request should be sent.
    public var hasSpeech: Bool

    public init(samples: [Int16], speech: Duration, hasSpeech: Bool) {
        self.samples = samples
        // 62.5 µs a sample, in whole nanoseconds.
        duration = .nanoseconds(Int64(samples.count) * 1_000_000_000 / Int64(Self.sampleRate))
        self.speech = speech
        self.hasSpeech = hasSpeech
    }

    public func wav() -> [UInt8] { WAV.encode(samples, sampleRate: Self.sampleRate) }
}
