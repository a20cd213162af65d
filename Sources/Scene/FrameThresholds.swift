// SPDX-License-Identifier: GPL-2.0-or-later

/// The filter's settings, named after their `[scene]` config keys; the defaults are the issue's.
public struct FrameThresholds: Sendable, Equatable {
    /// `dark_threshold`, 0...1: dark when the mean luminance is below it.
    public var darkThreshold: Double
    /// `blur_threshold`: blurry when the Laplacian variance (full-size 8-bit scale) is below it.
    public var blurThreshold: Double
    /// `change_bits`, 0...64: unchanged when the dHash is at most this many bits from the last frame sent.
    public var changeBits: Int

    public init(darkThreshold: Double = 0.15, blurThreshold: Double = 100, changeBits: Int = 10) {
        self.darkThreshold = darkThreshold
        self.blurThreshold = blurThreshold
        self.changeBits = changeBits
    }
}
