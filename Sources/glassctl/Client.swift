// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import GlassdAPI

/// A thin proxy for org.glassd.Manager1.
struct Client {
    let connection: BusConnection

    static func connect(_ bus: BusAddress, interactive: Bool = false) async throws -> Client {
        Client(connection: try await BusConnection.open(bus, allowInteractiveAuthorization: interactive))
    }

    func call(
        _ member: String, _ arguments: [DBusValue] = [], timeoutSeconds: Double = 25,
        sent: @Sendable (UInt64) -> Void = { _ in }
    ) async throws -> [DBusValue] {
        try await connection.call(
            GlassdBus.name, path: GlassdBus.managerPath, interface: GlassdBus.managerInterface, member: member,
            arguments, timeoutSeconds: timeoutSeconds, sent: sent)
    }

    func property(_ name: String) async throws -> DBusValue {
        let reply = try await connection.call(
            GlassdBus.name, path: GlassdBus.managerPath, interface: "org.freedesktop.DBus.Properties", member: "Get",
            [.string(GlassdBus.managerInterface), .string(name)])
        guard let value = reply.first else { throw ClientError.unexpectedReply("empty reply for \(name)") }
        if case .variant(let inner) = value { return inner }
        return value
    }

    func setProperty(_ name: String, _ value: DBusValue) async throws {
        _ = try await connection.call(
            GlassdBus.name, path: GlassdBus.managerPath, interface: "org.freedesktop.DBus.Properties", member: "Set",
            [.string(GlassdBus.managerInterface), .string(name), .variant(value)])
    }

    /// Signals from glassd's manager object.
    func managerSignals() async throws -> AsyncStream<BusSignal> {
        try await connection.signals(
            SignalMatch(sender: GlassdBus.name, path: GlassdBus.managerPath, interface: GlassdBus.managerInterface))
    }
}
