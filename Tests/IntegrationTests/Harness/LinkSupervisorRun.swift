// SPDX-License-Identifier: GPL-2.0-or-later
@testable import Bluetooth
import DBusKit
import LinkKit
import Logging

extension BLEWorld {
    /// The link library in this process (no glassd), not paired: a BlueZ client (with its pairing
    /// agent) and a supervisor with `settings`, both running until `body` returns; BlueZ is on
    /// the bus when `body` starts.
    func withSupervisor(settings: LinkSettings, _ body: (LinkSupervisor, BlueZClient) async throws -> Void) async throws {
        let bus = try await BusConnection.open(.address(world.busAddress))
        let client = BlueZClient(bus: bus, logger: Logger(label: "test"))
        let supervisor = LinkSupervisor(
            client: client, store: MemoryDeviceStore(), settings: settings, logger: Logger(label: "test"))
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await client.run() }
                group.addTask { await supervisor.run() }
                try await client.state.wait { $0.present }
                try await body(supervisor, client)
                group.cancelAll()
            }
        } catch {
            await bus.close()
            throw error
        }
        await bus.close()
    }
}

extension AsyncStream<LinkEvent> {
    /// The reason of the next link that goes down.
    func nextDrop() async throws -> String {
        for await event in self {
            if case .down(_, let reason) = event { return reason }
        }
        throw TestFailure("the link events ended before a link went down")
    }
}
