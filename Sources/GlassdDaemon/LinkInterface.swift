// SPDX-License-Identifier: GPL-2.0-or-later
import Bluetooth
import DBusKit
import Foundation
import GlassdAPI
import GlassdCore
import Logging

/// The glasses link on D-Bus: Pair, Unpair, Scan and the link properties on org.glassd.Manager1,
/// and one org.glassd.Device1 object per Monocle known.
struct LinkInterface {
    let connection: BusConnection
    let supervisor: LinkSupervisor
    let bluez: BlueZClient
    let logger: Logger

    /// Members added to org.glassd.Manager1.
    var methods: [InterfaceSpec.Method] {
        [
            .init("Pair", input: [("address", "s")], output: [("device", "o")]) { call in
                let address = call.arguments.first?.string ?? ""
                do throws(LinkError) {
                    let paired = try await supervisor.pair(address)
                    return [.objectPath(GlassdBus.devicePath(address: paired.description))]
                } catch {
                    throw ErrorMapping.busError(error)
                }
            },
            .init("Unpair") { _ in
                do throws(LinkError) {
                    try await supervisor.unpair()
                    return []
                } catch {
                    throw ErrorMapping.busError(error)
                }
            },
            .init("Scan", input: [("seconds", "u")], output: [("devices", "a(ssn)")]) { call in
                do throws(LinkError) {
                    let seen = try await supervisor.scan(seconds: call.arguments.first?.uint32 ?? 0)
                    let rows = seen.map { DBusValue.structure([.string($0.address.description), .string($0.name), .int16(exported($0.rssi))]) }
                    return [.array(element: "(ssn)", rows)]
                } catch {
                    throw ErrorMapping.busError(error)
                }
            },
        ]
    }

    var properties: [InterfaceSpec.Property] { Self.initialProperties }

    /// The link properties as they start (and stay, without Bluetooth).
    static var initialProperties: [InterfaceSpec.Property] {
        [
            .init(GlassdBus.Property.pairedDevice, .objectPath("/")),
            .init(GlassdBus.Property.state, .string(LinkState.unpaired.rawValue)),
        ]
    }

    private enum Update: Sendable {
        /// The link changed: shown in order, every state.
        case link(LinkSnapshot)
        /// Something in BlueZ changed (RSSI, names, devices come and go).
        case bluez
    }

    /// Mirrors the supervisor and BlueZ into properties and device objects until cancelled.
    func run() async {
        let (updates, sink) = AsyncStream.makeStream(of: Update.self)
        let bluezChanges = bluez.state.changes()
        await withDiscardingTaskGroup { group in
            group.addTask { for await snapshot in supervisor.changeStream { sink.yield(.link(snapshot)) } }
            group.addTask { for await _ in bluezChanges { sink.yield(.bluez) } }
            var shown: [BluetoothAddress: LinkSnapshot.Device] = [:]
            var lastSeen: [BluetoothAddress: UInt64] = [:]
            sink.yield(.bluez)
            for await update in updates {
                switch update {
                case .link(let snapshot):
                    await publishDevices(snapshot, shown: &shown, lastSeen: &lastSeen)
                    await publishLink(snapshot)
                case .bluez:
                    // The link's own fields only change through .link, so they never go back in time here.
                    var snapshot = await supervisor.snapshot()
                    for (i, device) in snapshot.devices.enumerated() {
                        if let before = shown[device.address] {
                            snapshot.devices[i].state = before.state
                            snapshot.devices[i].connected = before.connected
                            snapshot.devices[i].reconnectCount = before.reconnectCount
                        }
                    }
                    await publishDevices(snapshot, shown: &shown, lastSeen: &lastSeen)
                }
            }
        }
    }

    private func publishLink(_ snapshot: LinkSnapshot) async {
        do {
            let paired = snapshot.paired.map { DBusValue.objectPath(GlassdBus.devicePath(address: $0.description)) }
            try await connection.setProperty(
                GlassdBus.Property.pairedDevice, to: paired ?? .objectPath("/"), interface: GlassdBus.managerInterface,
                at: GlassdBus.managerPath)
            try await connection.setProperty(
                GlassdBus.Property.state, to: .string(snapshot.state.rawValue), interface: GlassdBus.managerInterface,
                at: GlassdBus.managerPath)
        } catch {
            logger.warning("cannot publish the link state, ignoring: \(error)")
        }
    }

    private func publishDevices(
        _ snapshot: LinkSnapshot, shown: inout [BluetoothAddress: LinkSnapshot.Device],
        lastSeen: inout [BluetoothAddress: UInt64]
    ) async {
        let now = UInt64(Date().timeIntervalSince1970 * 1000)
        var current = Dictionary(snapshot.devices.map { ($0.address, $0) }, uniquingKeysWith: { a, _ in a })
        for (address, _) in shown where current[address] == nil {
            await connection.unexport(
                interface: GlassdBus.deviceInterface, at: GlassdBus.devicePath(address: address.description),
                announce: true)
            lastSeen.removeValue(forKey: address)
        }
        for (address, device) in current {
            let path = GlassdBus.devicePath(address: address.description)
            let before = shown[address]
            // Seen again: a new RSSI reading, a connection, or first sight.
            if before == nil || before?.rssi != device.rssi || device.connected {
                if device.rssi != Int16.min || device.connected { lastSeen[address] = now }
            }
            let values = deviceValues(device, lastSeen: lastSeen[address] ?? 0)
            do {
                if before == nil {
                    try await connection.export(deviceSpec(values), at: path, announce: true)
                } else {
                    for (name, value) in values {
                        try await connection.setProperty(name, to: value, interface: GlassdBus.deviceInterface, at: path)
                    }
                }
            } catch {
                logger.warning("cannot publish \(address), will retry: \(error)")
                if before == nil { current.removeValue(forKey: address) }  // not exported: try again next time
            }
        }
        shown = current
    }

    private func deviceValues(_ device: LinkSnapshot.Device, lastSeen: UInt64) -> [(String, DBusValue)] {
        [
            (GlassdBus.DeviceProperty.address, .string(device.address.description)),
            (GlassdBus.DeviceProperty.name, .string(device.name)),
            (GlassdBus.DeviceProperty.rssi, .int16(exported(device.rssi))),
            (GlassdBus.DeviceProperty.connected, .bool(device.connected)),
            (GlassdBus.DeviceProperty.state, .string(device.state.rawValue)),
            (GlassdBus.DeviceProperty.reconnectCount, .uint32(device.reconnectCount)),
            (GlassdBus.DeviceProperty.lastSeen, .uint64(lastSeen)),
        ]
    }

    private func deviceSpec(_ values: [(String, DBusValue)]) -> InterfaceSpec {
        InterfaceSpec(
            name: GlassdBus.deviceInterface,
            properties: values.map { name, value in
                InterfaceSpec.Property(name, value, change: name == GlassdBus.DeviceProperty.address ? .constant : .emits)
            })
    }
}

/// RSSI as shown: 0 when never measured.
private func exported(_ rssi: Int16) -> Int16 { rssi == Int16.min ? 0 : rssi }
