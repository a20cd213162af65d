// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import Logging

/// org.bluez on the system bus: a mirror of its objects (`state`), calls into it, and glassd's
/// pairing agent.
public final class BlueZClient: Sendable {
    public let bus: BusConnection
    public let state = BlueZState()
    public let agent: PairingAgent
    let logger: Logger

    public init(bus: BusConnection, logger: Logger) {
        self.bus = bus
        self.logger = logger
        agent = PairingAgent(bus: bus, logger: logger)
    }

    /// The system bus connection was lost: the daemon must restart to see BlueZ again.
    public struct BusLost: Error, CustomStringConvertible {
        public var description: String { "the system bus connection was lost" }
    }

    /// Keeps `state` in step with org.bluez until cancelled, across bluetoothd restarts, and the
    /// pairing agent exported and registered with every bluetoothd; throws `BusLost` if the
    /// system bus goes away. Serves the connection's incoming calls (the agent's), so call it
    /// once per connection, and serve the connection nowhere else.
    public func run() async throws {
        try await bus.export(agent.spec, at: PairingAgent.path)
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await self.bus.serve() }
                group.addTask { await self.agent.keepRegistered(self.state) }
                try await mirror()
                group.cancelAll()
            }
        } catch {
            await bus.unexport(interface: PairingAgent.interface, at: PairingAgent.path)
            throw error
        }
        await bus.unexport(interface: PairingAgent.interface, at: PairingAgent.path)
    }

    private func mirror() async throws {
        // One subscription for both, so org.bluez's signals and its comings and goings are applied
        // in the order the bus sent them, and a snapshot and the signals after it converge.
        let events = try await bus.subscribe(
            SignalMatch(sender: BlueZ.service),
            SignalMatch(
                sender: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                member: "NameOwnerChanged"))
        await refresh()
        for await event in events {
            switch event {
            case .overflowed:
                // Some signals were lost while we were behind: only a fresh snapshot is right.
                logger.debug("fell behind org.bluez's signals; reading its objects again")
                await refresh()
            case .signal(let signal) where signal.interface == "org.freedesktop.DBus":
                guard signal.member == "NameOwnerChanged", signal.arguments.first?.string == BlueZ.service else { continue }
                if signal.arguments.last?.string?.isEmpty ?? true {
                    logger.notice("bluetoothd left the bus")
                    state.reset([:], present: false)
                } else {
                    logger.notice("bluetoothd is on the bus")
                    await refresh()
                }
            case .signal(let signal):
                apply(signal)
            }
        }
        // The subscription ends when the task is cancelled or the connection closes.
        guard Task.isCancelled else {
            state.reset([:], present: false)
            throw BusLost()
        }
    }

    private func refresh() async {
        do {
            let reply = try await bus.call(BlueZ.service, path: "/", interface: BlueZ.objectManager, member: "GetManagedObjects")
            var objects: BlueZObjects = [:]
            for (path, interfaces) in Self.objectsByPath(reply.first) { objects[path] = interfaces }
            state.reset(objects, present: true)
        } catch {
            logger.debug("org.bluez not available: \(error)")
            state.reset([:], present: false)
        }
    }

    private func apply(_ signal: BusSignal) {
        switch (signal.interface, signal.member) {
        case (BlueZ.objectManager, "InterfacesAdded"):
            guard let path = signal.arguments.first?.string, signal.arguments.count == 2 else { return }
            state.interfacesAdded(path, Self.interfaces(signal.arguments[1]))
        case (BlueZ.objectManager, "InterfacesRemoved"):
            guard let path = signal.arguments.first?.string, signal.arguments.count == 2 else { return }
            state.interfacesRemoved(path, signal.arguments[1].elements?.compactMap(\.string) ?? [])
        case (BlueZ.properties, "PropertiesChanged"):
            guard signal.arguments.count == 3, let interface = signal.arguments[0].string else { return }
            state.propertiesChanged(
                signal.path, interface, signal.arguments[1].stringKeyed ?? [:],
                signal.arguments[2].elements?.compactMap(\.string) ?? [])
        default: break
        }
    }

    /// a{oa{sa{sv}}} → path → interface → properties.
    static func objectsByPath(_ value: DBusValue?) -> [(String, [String: [String: DBusValue]])] {
        guard case .dict(_, _, let entries)? = value else { return [] }
        return entries.compactMap { entry in
            guard let path = entry.key.string else { return nil }
            return (path, interfaces(entry.value))
        }
    }

    /// a{sa{sv}} → interface → properties (variants unwrapped).
    static func interfaces(_ value: DBusValue) -> [String: [String: DBusValue]] {
        var out: [String: [String: DBusValue]] = [:]
        for (name, properties) in value.stringKeyed ?? [:] {
            out[name] = (properties.stringKeyed ?? [:]).mapValues(\.unwrapped)
        }
        return out
    }

    /// Calls a BlueZ method.
    @discardableResult
    func call(
        _ path: String, _ interface: String, _ member: String, _ arguments: [DBusValue] = [],
        timeoutSeconds: Double = 25
    ) async throws -> [DBusValue] {
        try await bus.call(
            BlueZ.service, path: path, interface: interface, member: member, arguments, timeoutSeconds: timeoutSeconds)
    }
}
