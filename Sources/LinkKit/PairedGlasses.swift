// SPDX-License-Identifier: GPL-2.0-or-later

/// A pairing as stored: the glasses' name, their kind when known, and the radios they are made
/// of (one for most kinds; one per arm for glasses such as Even Realities G1). The first radio's
/// address names the pair (Device1's path, Pair's answer).
public struct PairedGlasses: Sendable, Equatable {
    public struct Radio: Sendable, Equatable {
        /// What this radio is in the pair, as the kind names it ("main", "left", "right").
        public var role: String
        public var address: BluetoothAddress

        public init(role: String, address: BluetoothAddress) {
            self.role = role
            self.address = address
        }
    }

    /// The role of the one radio of a kind that has one.
    public static let soleRole = "main"

    public var name: String
    /// Device1.Kind's spelling; nil for a pairing stored before kinds were kept.
    public var kind: String?
    /// Never empty; in the kind's order of roles.
    public private(set) var radios: [Radio]

    public init(name: String, kind: String?, radios: [Radio]) {
        precondition(!radios.isEmpty, "glasses have a radio")
        self.name = name
        self.kind = kind
        self.radios = radios
    }

    /// Glasses of one radio.
    public init(address: BluetoothAddress, name: String, kind: String?) {
        self.init(name: name, kind: kind, radios: [Radio(role: Self.soleRole, address: address)])
    }

    /// The address that names the pair.
    public var address: BluetoothAddress { radios[0].address }

    public func contains(_ address: BluetoothAddress) -> Bool { radios.contains { $0.address == address } }
}
