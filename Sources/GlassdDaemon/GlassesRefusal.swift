// SPDX-License-Identifier: GPL-2.0-or-later

/// Why glassd refused a call about the glasses or their link (Pair, Unpair, Scan, Update, Display).
enum GlassesRefusal: Error, Sendable, Equatable {
    /// An update holds the glasses.
    case updating
    /// Display was called on a device object that is not the paired glasses.
    case notThePairedGlasses
    /// The glasses could not take the text: the link broke off (`why`, as the session said it).
    case wentAway(String)
    /// glassd runs without a system bus, so without BlueZ.
    case noBluetooth
    /// Display's text is longer than the glasses take.
    case textTooLong(maxBytes: Int)

    var message: String {
        switch self {
        case .updating: "The glasses are being updated."
        case .notThePairedGlasses: "These glasses are not paired."
        case .wentAway(let why): "The glasses went away: \(why)"
        case .noBluetooth: "Bluetooth is not available: no system bus."
        case .textTooLong(let maxBytes): "Display takes at most \(maxBytes) bytes of text."
        }
    }
}
