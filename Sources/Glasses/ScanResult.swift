// SPDX-License-Identifier: GPL-2.0-or-later
import LinkKit

/// Glasses seen while scanning: one pair, however many radios it is made of.
public struct ScanResult: Sendable, Equatable {
    /// One radio of the pair as seen.
    public struct Radio: Sendable, Equatable {
        public var role: String
        public var address: BluetoothAddress
        /// Int16.min when not advertising now.
        public var rssi: Int16

        public init(role: String, address: BluetoothAddress, rssi: Int16) {
            self.role = role
            self.address = address
            self.rssi = rssi
        }
    }

    /// The first radio's address (in the kind's order of roles, of those seen).
    public var address: BluetoothAddress
    public var name: String
    /// The strongest radio's.
    public var rssi: Int16
    public var kind: GlassesKindName
    /// The radios seen, in the kind's order of roles.
    public var radios: [Radio]

    public init(address: BluetoothAddress, name: String, rssi: Int16, kind: GlassesKindName, radios: [Radio]? = nil) {
        self.address = address
        self.name = name
        self.rssi = rssi
        self.kind = kind
        self.radios = radios ?? [Radio(role: PairedGlasses.soleRole, address: address, rssi: rssi)]
    }

    /// Whether every radio `kind` is made of has been seen.
    public func isWhole(as kind: GlassesKind) -> Bool { Set(radios.map(\.role)) == Set(kind.radios) }

    /// The pairing these glasses make.
    public var pairing: PairedGlasses {
        PairedGlasses(name: name, kind: kind.rawValue, radios: radios.map { PairedGlasses.Radio(role: $0.role, address: $0.address) })
    }

    /// Strongest first; equal strengths by address, so the order is stable.
    public static func strongestFirst(_ results: [ScanResult]) -> [ScanResult] {
        results.sorted { ($0.rssi, $1.address.description) > ($1.rssi, $0.address.description) }
    }
}
