// SPDX-License-Identifier: GPL-2.0-or-later
import Glasses
import LinkKit

/// What the D-Bus side shows of the link and the glasses seen.
public struct LinkSnapshot: Sendable, Equatable {
    public struct Device: Sendable, Equatable {
        public var address: BluetoothAddress
        public var name: String
        public var rssi: Int16
        public var connected: Bool
        public var state: LinkState
        public var reconnectCount: UInt32
        /// nil for paired glasses not in BlueZ's sight now.
        public var kind: GlassesKindName?
        /// The radios the glasses are made of (Device1.Radios), in the kind's order.
        public var radios: [Radio]
    }

    /// Where one radio of a pair of glasses stands, as BlueZ shows it.
    public enum RadioState: String, Sendable {
        case connected
        /// Advertising: bluetoothd has an RSSI for it now.
        case inRange = "in-range"
        case outOfRange = "out-of-range"
    }

    public struct Radio: Sendable, Equatable {
        public var address: BluetoothAddress
        public var role: String
        public var state: RadioState
    }

    public var state: LinkState
    public var paired: BluetoothAddress?
    public var devices: [Device]
    /// The generation of the current (or last) link, as in its `LinkEvent`s.
    public var generation: UInt64
    /// Why the link is where it is: waiting for the glasses, reconnecting; empty when connected.
    public var reason: String
}
