// SPDX-License-Identifier: GPL-2.0-or-later

/// BlueZ's D-Bus names (doc/org.bluez.*.rst).
enum BlueZ {
    static let service = "org.bluez"
    static let adapter = "org.bluez.Adapter1"
    static let device = "org.bluez.Device1"
    static let characteristic = "org.bluez.GattCharacteristic1"
    static let objectManager = "org.freedesktop.DBus.ObjectManager"
    static let properties = "org.freedesktop.DBus.Properties"
}

/// BlueZ's objects as mirrored: path → interface → property → value.
public typealias BlueZObjects = [String: [String: [String: DBusValue]]]

import DBusKit

