// SPDX-License-Identifier: GPL-2.0-or-later
import CSystemd
import DBusKit
import ServiceLifecycle
import Storage

/// Sends WATCHDOG=1 at half the interval systemd asks for, but only after the bus thread and the
/// database have both answered: a wedged core stops the pings and systemd restarts it.
struct WatchdogService: Service, CustomStringConvertible {
    /// What service-lifecycle logs: the name, not a dump of everything the service holds.
    var description: String { "WatchdogService" }

    let connection: BusConnection
    let database: GlassdDatabase

    func run() async throws {
        var usec: UInt64 = 0
        guard sd_watchdog_enabled(0, &usec) > 0, usec > 0 else {
            try? await gracefulShutdown()
            return
        }
        let interval = Duration.microseconds(Int64(usec / 2))
        try? await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                if await connection.isOpen, (try? await database.ping()) != nil {
                    _ = sd_notify(0, "WATCHDOG=1")
                }
                try await Task.sleep(for: interval)
            }
        }
    }
}
