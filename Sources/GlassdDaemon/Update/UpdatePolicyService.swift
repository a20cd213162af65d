// SPDX-License-Identifier: GPL-2.0-or-later
import ServiceLifecycle

/// Runs the update policy (update-required, automatic updates) until shutdown.
struct UpdatePolicyService: Service, CustomStringConvertible {
    /// What service-lifecycle logs: the name, not a dump of everything the service holds.
    var description: String { "UpdatePolicyService" }

    let updates: UpdateService

    func run() async throws {
        await cancelWhenGracefulShutdown { await updates.run() }
    }
}
