// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation

/// Numbers as an answer shows them: without binary noise, to a sensible number of digits.
enum Rounding {
    /// 12 significant digits: hides binary noise (0.1 + 0.2, 100 - 273.15) without changing any
    /// digit a person would see.
    static func tidy(_ value: Double) -> Double {
        guard value != 0, value.isFinite, let tidied = Double(String(format: "%.12g", value)) else { return 0 }
        return tidied
    }

    /// Four significant digits, half away from zero. Tidied first and scaled rather than printed
    /// with "%.4g", which reads the binary value: 273.15 is stored just below and would print 273.1.
    static func fourDigits(_ value: Double) -> Double {
        let value = tidy(value)
        guard value != 0 else { return 0 }
        let scale = pow(10, 3 - floor(log10(abs(value))))
        let rounded = (value * scale).rounded() / scale
        if scale.isFinite, scale > 0, rounded.isFinite { return rounded }
        return Double(String(format: "%.4g", value)) ?? value
    }
}
