// SPDX-License-Identifier: GPL-2.0-or-later

extension GrayImage {
    /// The mean luma, 0 (black) to 1 (white): the `dark` measure.
    public func meanLuminance() -> Double {
        var sum = 0
        pixels.withUnsafeBufferPointer { for value in $0 { sum += Int(value) } }
        return Double(sum) / (Double(pixels.count) * 255)
    }
}
