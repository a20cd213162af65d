// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit

/// Why glassd's pairing agent says no to a request. The agent answers bluetoothd in BlueZ's
/// own protocol (org.bluez.Agent1), not glassd's API, so its D-Bus error is made here, the one
/// place in this module that makes one (glassd's own errors are made in the daemon's ErrorMapping).
enum PairingRefusal: Error, Sendable, Equatable {
    /// Not a device glassd is pairing at this moment.
    case notPairing
    /// A PIN or passkey: not Just Works, and nobody is there to type one.
    case needsCode
    /// The caller is not the owner of org.bluez.
    case notBluetoothd

    var message: String {
        switch self {
        case .notPairing: "glassd is not pairing with this device"
        case .needsCode: "glassd pairs only without a PIN or passkey"
        case .notBluetoothd: "only bluetoothd may ask glassd's agent"
        }
    }

    /// The reply bluetoothd gets.
    var busError: BusError { BusError(name: PairingAgent.rejected, message: message) }
}
