// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import GlassdCore

/// Questions about the mirrored BlueZ tree.
extension BlueZState.Snapshot {
    /// The adapter to use: the named one, else the first powered one; nil when none qualifies.
    func adapterPath(named name: String?) -> String? {
        guard present else { return nil }
        if let name {
            let path = "/org/bluez/" + name
            return properties(path, BlueZ.adapter) != nil ? path : nil
        }
        return objects.keys.sorted().first { path in
            properties(path, BlueZ.adapter)?["Powered"]?.bool == true
        }
    }

    func isPowered(_ adapter: String) -> Bool {
        properties(adapter, BlueZ.adapter)?["Powered"]?.bool == true
    }

    func devicePath(_ adapter: String, _ address: BluetoothAddress) -> String {
        adapter + "/dev_" + address.pathComponent
    }

    /// Monocles known under `adapter`, in no particular order.
    func monocles(under adapter: String) -> [ScanResult] {
        objects.compactMap { path, interfaces in
            guard path.hasPrefix(adapter + "/"), let device = interfaces[BlueZ.device],
                let address = device["Address"]?.string.flatMap(BluetoothAddress.init)
            else { return nil }
            let name = device["Name"]?.string ?? device["Alias"]?.string
            let uuids = device["UUIDs"]?.elements?.compactMap(\.string) ?? []
            guard MonocleUUID.isMonocle(name: name, uuids: uuids) else { return nil }
            let rssi = device["RSSI"]?.int64.map { Int16(clamping: $0) } ?? Int16.min
            return ScanResult(address: address, name: name ?? "", rssi: rssi)
        }
    }

    /// Monocles bluetoothd sees advertising now (it has an RSSI for them).
    func inSight(under adapter: String) -> [ScanResult] {
        monocles(under: adapter).filter { $0.rssi != Int16.min }
    }

    func isConnected(_ device: String) -> Bool {
        let properties = properties(device, BlueZ.device)
        return properties?["Connected"]?.bool == true
    }

    func isResolved(_ device: String) -> Bool {
        isConnected(device) && properties(device, BlueZ.device)?["ServicesResolved"]?.bool == true
    }

    /// The characteristic with `uuid` under `device`: its path and MTU.
    func characteristic(_ device: String, uuid: String) -> (path: String, mtu: Int)? {
        for (path, interfaces) in objects where path.hasPrefix(device + "/") {
            guard let c = interfaces[BlueZ.characteristic], c["UUID"]?.string?.lowercased() == uuid else { continue }
            return (path, c["MTU"]?.int64.map(Int.init) ?? 23)
        }
        return nil
    }
}
