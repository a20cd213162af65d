// SPDX-License-Identifier: GPL-2.0-or-later

/// ITU-T G.711 µ-law: one byte per sample, companded (steps fine near silence and coarse when loud),
/// so quiet speech keeps more of its shape than in 8-bit linear at the same bytes on the link.
public enum MuLaw {
    /// The 16-bit sample a code stands for: G.711's 14-bit value scaled to 16 bits (±32,124 at most).
    public static func sample(_ code: UInt8) -> Int16 {
        let bits = ~code  // codes go on the line inverted (so silence is not a run of zeros)
        let segment = Int(bits >> 4 & 0x07)
        let step = Int(bits & 0x0F)
        // The bias (132) makes each segment's start a power of two; every segment doubles the step.
        let magnitude = ((step << 3) + bias) << segment - bias
        return Int16(bits & 0x80 == 0 ? magnitude : -magnitude)
    }

    public static func expand(_ codes: some Collection<UInt8>) -> [Int16] {
        codes.map(sample)
    }

    private static let bias = 0x84
}
