// SPDX-License-Identifier: GPL-2.0-or-later
import CSystemd
import DBusKit
import Logging
import ServiceLifecycle

/// Serves D-Bus method calls until shutdown; if the bus goes away first, fails so that systemd
/// restarts the daemon.
struct BusService: Service, CustomStringConvertible {
    /// What service-lifecycle logs: the name, not a dump of everything the service holds.
    var description: String { "BusService" }

    struct BusLost: Error, CustomStringConvertible {
        var description: String { "the D-Bus connection was lost" }
    }

    let connection: BusConnection
    let logger: Logger

    private enum Ending { case busClosed, shutdown }

    func run() async throws {
        let lost = await withTaskGroup(of: Ending.self) { group in
            group.addTask {
                await connection.serve()
                return .busClosed
            }
            group.addTask {
                // Throws only when cancelled, which means the other task ended first.
                try? await gracefulShutdown()
                return .shutdown
            }
            let first = await group.next()
            if first == .shutdown {
                _ = sd_notify(0, "STOPPING=1")
                logger.info("shutting down")
                // Closed without releasing the name first: the bus policy withholds the private
                // signals (answers, transcripts) by the name's owner, so a signal sent between a
                // ReleaseName and the close would reach every subscriber. Closing drops the name
                // and the connection at once.
                await connection.close()
            }
            group.cancelAll()
            return first == .busClosed
        }
        if lost { throw BusLost() }
    }
}
