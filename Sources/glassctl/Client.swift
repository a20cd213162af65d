// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import GlassdAPI
import GlassdContract

/// glassd on one connection: the typed proxies of its objects (generated from dbus/*.xml).
struct Client {
    let connection: BusConnection

    static func connect(_ bus: BusAddress, interactive: Bool = false) async throws -> Client {
        Client(connection: try await BusConnection.open(bus, allowInteractiveAuthorization: interactive))
    }

    /// org.glassd.Manager1 on /org/glassd.
    var manager: GlassdBus.Manager1.Proxy { .init(connection, destination: GlassdBus.name, path: GlassdBus.managerPath) }

    func device(_ path: String) -> GlassdBus.Device1.Proxy { .init(connection, destination: GlassdBus.name, path: path) }

    func agent(_ path: String) -> GlassdBus.AgentSession1.Proxy { .init(connection, destination: GlassdBus.name, path: path) }

    /// Signals from glassd's manager object.
    func managerSignals() async throws -> AsyncStream<BusSignal> {
        try await connection.signals(
            SignalMatch(sender: GlassdBus.name, path: GlassdBus.managerPath, interface: GlassdBus.managerInterface))
    }
}
