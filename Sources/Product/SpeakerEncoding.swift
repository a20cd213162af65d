// SPDX-License-Identifier: GPL-2.0-or-later
import Audio
import Glasses

/// Turns the voice's 16-bit PCM at 16 kHz into what the glasses' speaker takes: the same PCM (as
/// it comes: the speaker joins samples split across writes), or LC3 frames (liblc3), whole frames
/// only; `finish` ends the stream. One per spoken answer, used
/// by one task (the encoder carries state between calls).
final class SpeakerEncoding {
    private let encoder: LC3Encoder?

    /// Throws when the speaker's format is one glassd cannot make (PCM at another rate than the
    /// voice's, LC3 liblc3 cannot code).
    init(_ format: SpeakerFormat) throws {
        switch format.codec {
        case .pcm16:
            guard format.sampleRate == SpeechAudio.outputRate else {
                throw SessionError.unsupported("The glasses' speaker takes PCM at \(format.sampleRate) Hz, not the voice's 16 kHz.")
            }
            encoder = nil
        case .lc3(let frameBytes, let frameMicros):
            guard let duration = LC3Format.FrameDuration(rawValue: frameMicros) else {
                throw SessionError.unsupported("LC3 frames of \(frameMicros) µs are not made.")
            }
            let format = try LC3Format(sampleRate: format.sampleRate, frameDuration: duration, frameBytes: frameBytes)
            encoder = try LC3Encoder(format: format, pcmRate: SpeechAudio.outputRate)
        }
    }

    /// A sample's first byte, when a piece ended inside it.
    private var carry: [UInt8] = []

    /// The speaker's bytes for `pcm` (16-bit little-endian samples, split anywhere).
    func encode(_ pcm: [UInt8]) -> [UInt8] {
        guard let encoder else { return pcm }
        let bytes = carry + pcm
        var samples: [Int16] = []
        samples.reserveCapacity(bytes.count / 2)
        var i = 0
        while i + 1 < bytes.count {
            samples.append(Int16(bitPattern: UInt16(bytes[i]) | UInt16(bytes[i + 1]) << 8))
            i += 2
        }
        carry = i < bytes.count ? [bytes[i]] : []
        return encoder.encode(samples)
    }

    /// The end of the answer's audio: the last frame, padded with silence.
    func finish() -> [UInt8] { encoder?.flush() ?? [] }
}
