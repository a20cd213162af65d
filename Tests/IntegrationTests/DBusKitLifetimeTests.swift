// SPDX-License-Identifier: GPL-2.0-or-later
@testable import DBusKit
import Testing

extension DBusKitTests {
    @Test("a connection released without close() is closed: its name leaves the bus and its thread ends")
    func releasedConnectionCloses() async throws {
        try await World.with { world in
            let watcher = try await BusConnection.open(.address(world.busAddress))
            // Subscribed first: the bus says when it has seen the connection go (it notices the
            // closed socket in its own time, after the thread has ended).
            let owners = try await watcher.signals(
                SignalMatch(path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: "NameOwnerChanged"))
            weak var released: BusConnection?
            let exited: LoopExit
            let name: String
            do {
                let connection = try await BusConnection.open(.address(world.busAddress), threadName: "test-released")
                name = try await connection.uniqueName()
                released = connection
                exited = connection.loop.exited
            }
            #expect(released == nil, "something still holds the connection")
            let ended = await result(of: Task { await exited.wait() }, within: .seconds(60))
            #expect(ended != nil, "the connection's thread did not end")
            try await within(.seconds(60), failure: { "\(name) is still on the bus" }) {
                for await signal in owners where signal.arguments.first?.string == name {
                    if signal.arguments.last?.string == "" { return }
                }
                throw TestFailure("the watcher's connection ended")
            }
            let owned = try await watcher.call(
                "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: "NameHasOwner",
                [.string(name)])
            #expect(owned == [.bool(false)], "\(name) is still on the bus")
            await watcher.close()
        }
    }
}
