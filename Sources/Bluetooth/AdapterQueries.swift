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

    /// Glasses of `kinds` known under `adapter`, in no particular order: one result per pair, its
    /// radios gathered by the kind's `radioOf` (a radio it cannot place is left out).
    func glasses(under adapter: String, kinds: [GlassesKind]) -> [ScanResult] {
        let characteristics = characteristicUUIDs(under: adapter)
        var single: [ScanResult] = []
        var pairs: [String: (kind: GlassesKind, radios: [(radio: ScanResult.Radio, name: String)])] = [:]
        for (path, interfaces) in objects {
            guard path.hasPrefix(adapter + "/"), let device = interfaces[BlueZ.device],
                let address = device["Address"]?.string.flatMap(BluetoothAddress.init),
                let sighting = sighting(path, characteristics: characteristics[path] ?? []),
                let (kind, identified) = kinds.identify(sighting)
            else { continue }
            let rssi = device["RSSI"]?.int64.map { Int16(clamping: $0) } ?? Int16.min
            guard kind.isMultiRadio else {
                // As identified: a variant (Halo) once it has shown what tells it apart.
                single.append(ScanResult(address: address, name: sighting.name ?? "", rssi: rssi, kind: identified))
                continue
            }
            guard let (pair, role) = kind.radioOf(sighting), kind.radios.contains(role) else { continue }
            let key = kind.name.rawValue + "\u{0}" + pair
            pairs[key, default: (kind, [])].radios.append((.init(role: role, address: address, rssi: rssi), sighting.name ?? pair))
        }
        return single
            + pairs.values.map { kind, seen in
                // One radio per role (a stale object of a radio's earlier address loses to the one
                // advertising); the pair is named as its first radio is.
                var byRole: [String: (radio: ScanResult.Radio, name: String)] = [:]
                for entry in seen where byRole[entry.radio.role].map({ entry.radio.rssi > $0.radio.rssi }) ?? true {
                    byRole[entry.radio.role] = entry
                }
                let radios = kind.radios.compactMap { byRole[$0] }
                return ScanResult(
                    address: radios[0].radio.address, name: radios[0].name, rssi: radios.map(\.radio.rssi).max() ?? Int16.min,
                    kind: kind.name, radios: radios.map(\.radio))
            }
    }

    /// Glasses bluetoothd sees advertising now (it has an RSSI for at least one of their radios).
    func inSight(under adapter: String, kinds: [GlassesKind]) -> [ScanResult] {
        glasses(under: adapter, kinds: kinds).filter { $0.rssi != Int16.min }
    }

    /// Each radio of `glasses` as BlueZ shows it now: connected, advertising (in range) or not.
    func radioStates(_ glasses: PairedGlasses, under adapter: String) -> [LinkSnapshot.Radio] {
        glasses.radios.map { radio in
            let device = devicePath(adapter, radio.address)
            let state: LinkSnapshot.RadioState =
                isConnected(device) ? .connected : properties(device, BlueZ.device)?["RSSI"] != nil ? .inRange : .outOfRange
            return LinkSnapshot.Radio(address: radio.address, role: radio.role, state: state)
        }
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
