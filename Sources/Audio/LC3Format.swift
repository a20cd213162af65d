// SPDX-License-Identifier: GPL-2.0-or-later
import CLC3

/// An LC3 stream's shape, as Halo's `speaker.start` and `microphone.start` take it: mono, a sample
/// rate, a frame duration, and a constant frame size (CBR: bitrate × duration / 8, rounded down).
/// Checked against what liblc3 1.0.1 can code, so an encoder or decoder made from it cannot fail
/// for its parameters.
public struct LC3Format: Sendable, Hashable, CustomStringConvertible {
    public enum FrameDuration: Int, Sendable, Hashable, CaseIterable {
        case ms7_5 = 7_500
        case ms10 = 10_000

        public var microseconds: Int { rawValue }
    }

    /// The rates liblc3 codes (its LC3_CHECK_SR_HZ, a macro Swift cannot import).
    public static let sampleRates: Set<Int> = [8_000, 16_000, 24_000, 32_000, 48_000]
    public static let minimumBitrate = Int(LC3_MIN_BITRATE)
    public static let frameBytesRange = Int(LC3_MIN_FRAME_BYTES)...Int(LC3_MAX_FRAME_BYTES)

    /// 16 kHz, 10 ms, 32 kbps (40-byte frames): glassd's choice for Halo's speaker (its microphone sends 48 kbps).
    /// Measured (Scripts/bench-speech-embedded --mic-formats): an eighth of PCM16's bytes for 2.5
    /// points more words wrong; 16 kbps halves the bytes again for 2.6 points more.
    public static let voice = LC3Format(checkedRate: 16_000, duration: .ms10, frameBytes: 40)

    public let sampleRate: Int
    public let frameDuration: FrameDuration
    public let frameBytes: Int

    public init(sampleRate: Int, frameDuration: FrameDuration, bitrate: Int) throws(LC3Error) {
        // Halo takes any multiple of 8000 (8 kbps too); liblc3 refuses below 16 kbps.
        guard bitrate >= Self.minimumBitrate else { throw .bitrateBelowMinimum(bitrate) }
        // Overflow-free for any Int: the range check below refuses what this would make too large.
        let bytes = bitrate > 1_000_000_000 ? Int.max : bitrate * frameDuration.microseconds / 8_000_000
        try self.init(sampleRate: sampleRate, frameDuration: frameDuration, frameBytes: bytes)
    }

    public init(sampleRate: Int, frameDuration: FrameDuration, frameBytes: Int) throws(LC3Error) {
        guard Self.sampleRates.contains(sampleRate) else { throw .unsupportedSampleRate(sampleRate) }
        guard Self.frameBytesRange.contains(frameBytes) else {
            throw .frameBytesOutOfRange(frameBytes, frameDuration)
        }
        self.init(checkedRate: sampleRate, duration: frameDuration, frameBytes: frameBytes)
    }

    private init(checkedRate: Int, duration: FrameDuration, frameBytes: Int) {
        sampleRate = checkedRate
        frameDuration = duration
        self.frameBytes = frameBytes
    }

    /// Samples in one frame at the codec's rate (at another PCM rate: `samples(atRate:)`).
    public var samplesPerFrame: Int { samples(atRate: sampleRate) }

    /// Samples one frame holds at `rate` (the encoder's input or the decoder's output rate).
    public func samples(atRate rate: Int) -> Int { rate * frameDuration.microseconds / 1_000_000 }

    /// The bitrate the frames carry (the one asked for, rounded down to whole bytes a frame).
    public var bitrate: Int { frameBytes * 8_000_000 / frameDuration.microseconds }

    /// Bytes on the link for one second of audio.
    public var bytesPerSecond: Double { Double(frameBytes) * 1_000_000 / Double(frameDuration.microseconds) }

    public var description: String {
        let ms = frameDuration == .ms10 ? "10" : "7.5"
        return "LC3 \(sampleRate) Hz, \(ms) ms, \(frameBytes)-byte frames (\(bitrate) bps)"
    }
}

/// An LC3 format or codec set-up liblc3 cannot make.
public enum LC3Error: Error, Sendable, Equatable, CustomStringConvertible {
    case unsupportedSampleRate(Int)
    case bitrateBelowMinimum(Int)
    case frameBytesOutOfRange(Int, LC3Format.FrameDuration)
    /// The encoder's input (or the decoder's output) rate: a rate liblc3 codes, not below the codec's.
    case unsupportedPCMRate(pcm: Int, codec: Int)
    /// liblc3 refused a set-up the checks above let through (a liblc3 other than 1.0.1's rules).
    case setupFailed(String)

    public var description: String {
        switch self {
        case .unsupportedSampleRate(let rate):
            "LC3 at \(rate) Hz: liblc3 codes 8000, 16000, 24000, 32000 or 48000 Hz"
        case .bitrateBelowMinimum(let bitrate):
            "LC3 at \(bitrate) bps: liblc3 needs ≥ 16 kbps (16000 bps)"
        case .frameBytesOutOfRange(let bytes, let duration):
            "LC3 frames of \(bytes) bytes: liblc3 takes 20–400 bytes a frame"
                + (duration == .ms7_5 ? " (at 7.5 ms: 21334–320000 bps)" : " (at 10 ms: 16000–320000 bps)")
        case .unsupportedPCMRate(let pcm, let codec):
            "LC3 at \(codec) Hz from or to PCM at \(pcm) Hz: the PCM rate must be one liblc3 codes, ≥ \(codec) Hz"
        case .setupFailed(let what):
            "liblc3 refused to set up \(what)"
        }
    }
}
