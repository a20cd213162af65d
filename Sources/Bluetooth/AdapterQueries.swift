// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import Glasses
import LinkKit

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

    /// What BlueZ shows of `device` to tell its kind: name, service UUIDs, and the
    /// characteristics once resolved (`characteristics`, when already gathered).
    func sighting(_ device: String, characteristics: [String]? = nil) -> Sighting? {
        guard let properties = properties(device, BlueZ.device) else { return nil }
        return Sighting(
            name: properties["Name"]?.string ?? properties["Alias"]?.string,
            serviceUUIDs: properties["UUIDs"]?.elements?.compactMap(\.string) ?? [],
            characteristicUUIDs: characteristics
                ?? objects.compactMap { path, interfaces in
                    path.hasPrefix(device + "/") ? interfaces[BlueZ.characteristic]?["UUID"]?.string : nil
                })
    }

    /// The characteristic UUIDs of every device under `adapter`, by device path, in one pass
    /// (BlueZ puts them at device/serviceXXXX/charYYYY).
    private func characteristicUUIDs(under adapter: String) -> [String: [String]] {
        var found: [String: [String]] = [:]
        for (path, interfaces) in objects where path.hasPrefix(adapter + "/") {
            guard let uuid = interfaces[BlueZ.characteristic]?["UUID"]?.string else { continue }
            let parts = path.split(separator: "/", omittingEmptySubsequences: false)
            guard let index = parts.firstIndex(where: { $0.hasPrefix("dev_") }) else { continue }
            found[parts[...index].joined(separator: "/"), default: []].append(uuid)
        }
        return found
    }

    /// Glasses of `kinds` known under `adapter`, in no particular order.
    func glasses(under adapter: String, kinds: [GlassesKind]) -> [ScanResult] {
        let characteristics = characteristicUUIDs(under: adapter)
        return objects.compactMap { path, interfaces in
            guard path.hasPrefix(adapter + "/"), let device = interfaces[BlueZ.device],
                let address = device["Address"]?.string.flatMap(BluetoothAddress.init)
            else { return nil }
            guard let sighting = sighting(path, characteristics: characteristics[path] ?? []), let kind = kinds.identify(sighting)
            else { return nil }
            let rssi = device["RSSI"]?.int64.map { Int16(clamping: $0) } ?? Int16.min
            return ScanResult(address: address, name: sighting.name ?? "", rssi: rssi, kind: kind.name)
        }
    }

    /// Glasses bluetoothd sees advertising now (it has an RSSI for them).
    func inSight(under adapter: String, kinds: [GlassesKind]) -> [ScanResult] {
        glasses(under: adapter, kinds: kinds).filter { $0.rssi != Int16.min }
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
