// SPDX-License-Identifier: GPL-2.0-or-later

/// What the glasses' microphone sends: mono, signed, 8 or 16 kHz, 8-bit (the Monocle's, each byte
/// a sample's high byte) or 16-bit little-endian (Frame's).
public struct PCMInput: Sendable, Equatable {
    public var sampleRate: Int
    public var bits: Int

    public init(sampleRate: Int, bits: Int) {
        self.sampleRate = sampleRate
        self.bits = bits
    }

    var supported: Bool { (sampleRate == 8_000 || sampleRate == 16_000) && (bits == 8 || bits == 16) }
}

/// Bytes to 16-bit samples as they stream in: a 16-bit sample split across two chunks is kept
/// until its second byte comes.
struct PCMWidener {
    let bits: Int
    private var carry: UInt8?

    init(bits: Int) { self.bits = bits }

    mutating func widen(_ bytes: ArraySlice<UInt8>) -> [Int16] {
        guard bits == 16 else { return PCM8.widen(bytes) }
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
