// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import Foundation
import LinkKit

/// BlueZ's D-Bus names (doc/org.bluez.*.rst).
enum BlueZ {
    static let service = "org.bluez"
    static let adapter = "org.bluez.Adapter1"
    static let device = "org.bluez.Device1"
    static let characteristic = "org.bluez.GattCharacteristic1"
    static let agentManager = "org.bluez.AgentManager1"
    static let objectManager = "org.freedesktop.DBus.ObjectManager"
    static let properties = "org.freedesktop.DBus.Properties"

    /// Why a call to BlueZ failed, for people: its message ("le-connection-abort-by-local",
    /// "Page Timeout"), or the error's own name when it has none ("NotReady"); never the
    /// D-Bus name with its dots.
    static func reason(_ error: any Error) -> String {
        switch error {
        case let error as BusError:
            let message = error.message.trimmingCharacters(in: .whitespacesAndNewlines)
            if !message.isEmpty { return message }
            return error.name.split(separator: ".").last.map(String.init) ?? error.name
        case let error as LinkError: return error.message
        case is BlueZState.TimedOut: return "no answer in time"
        default: return "\(error)"
        }
    }
}

/// BlueZ's objects as mirrored: path → interface → property → value.
public typealias BlueZObjects = [String: [String: [String: DBusValue]]]
