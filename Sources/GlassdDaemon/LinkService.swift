// SPDX-License-Identifier: GPL-2.0-or-later
import Bluetooth
import Product
import ServiceLifecycle

/// Runs the BlueZ mirror, the link supervisor, the D-Bus mirror of both and the product on the
/// glasses until shutdown.
struct LinkService: Service, CustomStringConvertible {
    /// What service-lifecycle logs: the name, not a dump of everything the service holds.
    var description: String { "LinkService" }

    let bluez: BlueZClient
    let supervisor: LinkSupervisor
    let interface: LinkInterface
    let product: GlassesProduct<ContinuousClock>

    func run() async throws {
        try await cancelWhenGracefulShutdown {
            try await withThrowingDiscardingTaskGroup { group in
                group.addTask { try await bluez.run() }
                group.addTask { await supervisor.run() }
                group.addTask { await interface.run() }
                group.addTask { await product.run() }
            }
        }
    }
}
