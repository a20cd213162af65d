// SPDX-License-Identifier: GPL-2.0-or-later
import LinkKit

/// Glasses seen while scanning.
public struct ScanResult: Sendable, Equatable {
    public var address: BluetoothAddress
    public var name: String
    public var rssi: Int16
    public var kind: GlassesKindName

    public init(address: BluetoothAddress, name: String, rssi: Int16, kind: GlassesKindName) {
        self.address = address
        self.name = name
        self.rssi = rssi
        self.kind = kind
    }

    /// Strongest first; equal strengths by address, so the order is stable.
    public static func strongestFirst(_ results: [ScanResult]) -> [ScanResult] {
        results.sorted { ($0.rssi, $1.address.description) > ($1.rssi, $0.address.description) }
    }
}
