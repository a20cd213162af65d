// SPDX-License-Identifier: GPL-2.0-or-later

/// A Bluetooth device address, "AA:BB:CC:DD:EE:FF" (normalised to upper case).
public struct BluetoothAddress: Sendable, Hashable, CustomStringConvertible {
    public let description: String

    /// nil unless `text` is six colon-separated hex bytes.
    public init?(_ text: String) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 6, parts.allSatisfy({ $0.count == 2 && $0.allSatisfy(\.isHexDigit) }) else { return nil }
        description = parts.joined(separator: ":").uppercased()
    }

    /// The form used in object paths: "AA_BB_CC_DD_EE_FF".
    public var pathComponent: String { description.replacingOccurrences(of: ":", with: "_") }
}

extension String {
    fileprivate func replacingOccurrences(of target: String, with replacement: String) -> String {
        split(separator: Character(target), omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
