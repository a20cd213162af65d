// SPDX-License-Identifier: GPL-2.0-or-later

/// What the glasses' microphone sends: mono, signed, 8 or 16 kHz, 8-bit (each byte a sample's high
/// byte, or a G.711 µ-law code) or 16-bit little-endian, or LC3 frames as a byte stream (Halo's).
public struct PCMInput: Sendable, Equatable, CustomStringConvertible {
    public var sampleRate: Int
    public var bits: Int
    /// 8-bit samples are µ-law codes rather than linear.
    public var muLaw: Bool
    /// LC3's frames, when the samples come coded.
    public var lc3: LC3Format?

    public init(sampleRate: Int, bits: Int, muLaw: Bool = false) {
        self.sampleRate = sampleRate
        self.bits = bits
        self.muLaw = muLaw
    }

    public init(lc3: LC3Format) {
        sampleRate = lc3.sampleRate
        bits = 16
        muLaw = false
        self.lc3 = lc3
    }

    /// As the glasses describe it: `lc3Frame` for LC3 frames of that many bytes and microseconds,
    /// `muLaw` for 8-bit µ-law codes.
    public init(sampleRate: Int, bits: Int, lc3Frame: (bytes: Int, micros: Int)?, muLaw: Bool = false) throws(AudioError) {
        guard let frame = lc3Frame else {
            self.init(sampleRate: sampleRate, bits: bits, muLaw: muLaw)
            return
        }
        guard let duration = LC3Format.FrameDuration(rawValue: frame.micros) else {
            throw .unsupportedInput("LC3 frames of \(frame.micros) µs")
        }
        do {
            self.init(lc3: try LC3Format(sampleRate: sampleRate, frameDuration: duration, frameBytes: frame.bytes))
        } catch {
            throw .unsupportedInput("LC3 at \(sampleRate) Hz in \(frame.bytes)-byte frames: \(error)")
        }
    }

    var supported: Bool {
        lc3 != nil || ((sampleRate == 8_000 || sampleRate == 16_000) && (bits == 8 || (bits == 16 && !muLaw)))
    }

    public var description: String {
        lc3.map { "LC3 \($0)" } ?? "\(sampleRate) Hz \(bits)-bit\(muLaw ? " µ-law" : "")"
    }

    /// The rate of the samples it gives: LC3 is decoded straight to 16 kHz.
    var samplesRate: Int { lc3 == nil ? sampleRate : 16_000 }
}

/// The microphone's bytes as 16-bit samples at `PCMInput.samplesRate`, streaming: widened PCM,
/// or LC3 decoded (liblc3) from a byte stream cut into frames anywhere. One owner.
final class MicrophoneSamples {
    private var widener: PCMWidener
    private let decoder: LC3Decoder?

    init(_ input: PCMInput) throws(AudioError) {
        guard input.supported else { throw .unsupportedInput(input.description) }
        widener = PCMWidener(bits: input.bits, muLaw: input.muLaw)
        if let lc3 = input.lc3 {
            do {
                decoder = try LC3Decoder(format: lc3, pcmRate: input.samplesRate)
            } catch {
                throw .unsupportedInput("\(input): \(error)")
            }
        } else {
            decoder = nil
        }
    }

    func samples(_ bytes: ArraySlice<UInt8>) -> [Int16] {
        decoder?.decode(bytes) ?? widener.widen(bytes)
    }
}

/// Bytes to 16-bit samples as they stream in: a 16-bit sample split across two chunks is kept
/// until its second byte comes.
struct PCMWidener {
    let bits: Int
    let muLaw: Bool
    private var carry: UInt8?

    init(bits: Int, muLaw: Bool = false) {
        self.bits = bits
        self.muLaw = muLaw
    }

    mutating func widen(_ bytes: ArraySlice<UInt8>) -> [Int16] {
        guard bits == 16 else { return muLaw ? MuLaw.expand(bytes) : PCM8.widen(bytes) }
        var out: [Int16] = []
        out.reserveCapacity((bytes.count + 1) / 2)
        var low = carry
        for byte in bytes {
            if let first = low {
                out.append(Int16(bitPattern: UInt16(first) | UInt16(byte) << 8))
                low = nil
            } else {
                low = byte
            }
        }
        carry = low
        return out
    }
}
