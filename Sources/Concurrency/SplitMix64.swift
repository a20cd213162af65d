// SPDX-License-Identifier: GPL-2.0-or-later

/// splitmix64: a small seeded generator whose neighbouring seeds give unrelated-looking values.
/// Deterministic on purpose: multipart boundaries that depend on the request alone, and fuzz
/// cases that repeat from run to run.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    public static let golden: UInt64 = 0x9E37_79B9_7F4A_7C15
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= Self.golden
        return Self.mix(state)
    }

    /// The finaliser alone: the value `next()` gives when the state is `z`.
    public static func mix(_ z: UInt64) -> UInt64 {
        var z = z
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
