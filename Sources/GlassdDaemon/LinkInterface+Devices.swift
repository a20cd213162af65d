// SPDX-License-Identifier: GPL-2.0-or-later
import Bluetooth
import Concurrency
import DBusKit
import Foundation
import GlassdAPI
import GlassdContract
import Glasses
import LinkKit
import Logging

/// What LinkInterface has put on the bus, so the next update publishes only differences.
struct Shown {
    var devices: [BluetoothAddress: LinkSnapshot.Device] = [:]
    var lastSeen: [BluetoothAddress: UInt64] = [:]
    var session = SessionStatus(state: .disconnected)
    var mark = UpdateMark.none
}

extension LinkInterface {
    /// Display(text) takes at most this many bytes.
    static let maxDisplayBytes = 4096

    /// A device's State: the session's while its link is up, else the link's own. Updates from
    /// the link and the session arrive separately: a session about an older link has not begun
    /// on this one yet.
    static func state(
        _ device: LinkSnapshot.Device, paired: Bool, session: SessionStatus, link: UInt64, mark: UpdateMark = .none
    ) -> String {
        // An update speaks for the paired glasses throughout, in their bootloader too.
        if paired && mark == .updating { return SessionState.updating.rawValue }
        guard paired, device.state == .connected else { return device.state.rawValue }
        guard session.generation == link else { return SessionState.connecting.rawValue }
        if session.state == .ready, case .required = mark { return updateRequired }
        return session.state.rawValue
    }

    /// Device1.State of ready glasses that run other versions than the pinned ones.
    static let updateRequired = "update-required"

    func publishLink(_ snapshot: LinkSnapshot, session: SessionStatus) async {
        let mark = updateMark.current
        let state =
            snapshot.paired.flatMap { address in snapshot.devices.first { $0.address == address } }
            .map { Self.state($0, paired: true, session: session, link: snapshot.generation, mark: mark) }
            ?? LinkState.unpaired.rawValue
        do {
            let paired = snapshot.paired.map { DBusValue.objectPath(GlassdBus.devicePath(address: $0.description)) }
            try await connection.setProperty(
                GlassdBus.Property.pairedDevice, to: paired ?? .objectPath("/"), interface: GlassdBus.managerInterface,
                at: GlassdBus.managerPath)
            try await connection.setProperty(
                GlassdBus.Property.state, to: .string(state), interface: GlassdBus.managerInterface,
                at: GlassdBus.managerPath)
        } catch {
            logger.warning("cannot publish the link state, ignoring: \(error)")
        }
        publishedPairing.set(snapshot.paired)
    }

    func publishDevices(_ snapshot: LinkSnapshot, shown: inout Shown) async {
        let now = UInt64(Date().timeIntervalSince1970 * 1000)
        let current = Dictionary(snapshot.devices.map { ($0.address, $0) }, uniquingKeysWith: { a, _ in a })
        for (address, _) in shown.devices where current[address] == nil {
            await connection.unexport(
                interface: GlassdBus.deviceInterface, at: GlassdBus.devicePath(address: address.description),
                announce: true)
            shown.devices.removeValue(forKey: address)
            shown.lastSeen.removeValue(forKey: address)
        }
        for (address, var device) in current {
            let before = shown.devices[address]
            // Glasses out of sight keep the kind they were last seen as; a Halo stays one after its
            // link (and so the characteristic that tells it from a Frame) is gone.
            if device.kind == nil || supervisor.settings.kinds.isVariant(before?.kind, of: device.kind) { device.kind = before?.kind }
            // Seen again: a new RSSI reading, a connection, or first sight.
            if before == nil || before?.rssi != device.rssi || device.connected {
                if device.rssi != Int16.min || device.connected { shown.lastSeen[address] = now }
            }
            await publish(device, paired: address == snapshot.paired, link: snapshot, shown: &shown)
        }
    }

    /// Exports or updates one device object.
    func publish(_ device: LinkSnapshot.Device, paired: Bool, link: LinkSnapshot, shown: inout Shown) async {
        let path = GlassdBus.devicePath(address: device.address.description)
        let values = deviceValues(
            device, paired: paired, session: shown.session, link: link, mark: shown.mark,
            lastSeen: shown.lastSeen[device.address] ?? 0)
        do {
            if shown.devices[device.address] == nil {
                try await connection.export(deviceSpec(values, address: device.address), at: path, announce: true)
            } else {
                for (name, value) in values {
                    try await connection.setProperty(name, to: value, interface: GlassdBus.deviceInterface, at: path)
                }
            }
            shown.devices[device.address] = device
        } catch {
            // Not exported: tried again at the next update.
            logger.warning("cannot publish \(device.address), will retry: \(error)")
        }
    }

    private func deviceValues(
        _ device: LinkSnapshot.Device, paired: Bool, session: SessionStatus, link: LinkSnapshot, mark: UpdateMark,
        lastSeen: UInt64
    ) -> [(String, DBusValue)] {
        let state = Self.state(device, paired: paired, session: session, link: link.generation, mark: mark)
        // While the link is down its reason speaks (waiting, reconnecting); while up, the session's.
        var reason = !paired ? "" : device.state == .connected ? session.reason : link.reason
        if state == Self.updateRequired, case .required(let why) = mark { reason = why }
        // What the session read stays shown while the paired device is away; others have none.
        let info = paired ? session.info : nil
        return [
            (GlassdBus.DeviceProperty.address, .string(device.address.description)),
            (GlassdBus.DeviceProperty.name, .string(device.name)),
            (GlassdBus.DeviceProperty.kind, .string(device.kind?.rawValue ?? "")),
            (GlassdBus.DeviceProperty.rssi, .int16(exported(device.rssi))),
            (GlassdBus.DeviceProperty.connected, .bool(device.connected)),
            // The reason first: a client that reads it when State changes finds the new one.
            (GlassdBus.DeviceProperty.stateReason, .string(reason)),
            (GlassdBus.DeviceProperty.state, .string(state)),
            (GlassdBus.DeviceProperty.reconnectCount, .uint32(device.reconnectCount)),
            (GlassdBus.DeviceProperty.lastSeen, .uint64(lastSeen)),
            (GlassdBus.DeviceProperty.firmwareVersion, .string(info?.firmwareVersion ?? "")),
            // Named by the contract before components were: a Monocle's FPGA.
            (GlassdBus.DeviceProperty.fpgaVersion, .string(info?.version(of: "fpga") ?? "")),
            (GlassdBus.DeviceProperty.components, components(paired ? device.kind : nil, info)),
            (GlassdBus.DeviceProperty.radios, Self.radios(device.radios)),
            (GlassdBus.DeviceProperty.scriptsVersion, .string(info?.runningScripts ?? "")),
            (GlassdBus.DeviceProperty.battery, .byte(info?.battery ?? 0)),
            (GlassdBus.DeviceProperty.charging, .bool(info?.charging ?? false)),
        ]
    }

    /// Device1.Radios: (address, role, state) of each radio.
    static func radios(_ radios: [LinkSnapshot.Radio]) -> DBusValue {
        .array(
            element: "(sss)",
            radios.map { .structure([.string($0.address.description), .string($0.role), .string($0.state.rawValue)]) })
    }

    /// The kind's updatable components and the versions read of them (Device1.Components).
    private func components(_ kind: GlassesKindName?, _ info: DeviceInfo?) -> DBusValue {
        let names = kind.flatMap { supervisor.settings.kinds.kind(named: $0) }?.updaters.map(\.component) ?? []
        let entries = names.map { DBusValue.DictEntry(.string($0), .string(info?.version(of: $0) ?? "")) }
        return .dict(key: "s", value: "s", entries)
    }

    private func deviceSpec(_ values: [(String, DBusValue)], address: BluetoothAddress) -> InterfaceSpec {
        GlassdBus.Device1.spec(
            methods: [
                GlassdBus.Device1.Display.method { [supervisor, session, updateMark] call in
                    let text = call.arguments.first?.string ?? ""
                    guard updateMark.current != .updating else { throw ErrorMapping.busError(GlassesRefusal.updating) }
                    guard text.utf8.count <= Self.maxDisplayBytes else {
                        throw ErrorMapping.busError(GlassesRefusal.textTooLong(maxBytes: Self.maxDisplayBytes))
                    }
                    guard await supervisor.snapshot().paired == address else {
                        throw ErrorMapping.busError(GlassesRefusal.notThePairedGlasses)
                    }
                    do {
                        try await session.display(text)
                    } catch SessionError.notConnected(let message) {
                        throw ErrorMapping.busError(SessionError.notConnected(message))
                    } catch {
                        throw ErrorMapping.busError(GlassesRefusal.wentAway("\(error)"))
                    }
                    return []
                }
            ],
            properties: values.compactMap { name, value in GlassdBus.Device1.PropertySpec.named(name, value) })
    }
}
