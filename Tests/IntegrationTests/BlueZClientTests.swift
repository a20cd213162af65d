// SPDX-License-Identifier: GPL-2.0-or-later
import Bluetooth
import DBusKit
import Foundation
import Logging
import Testing

@Suite("BlueZ mirror", .timeLimit(.minutes(3)))
struct BlueZClientTests {
    /// A fake org.bluez, served by DBusKit, made to outrun BlueZClient: the mirror is made to read
    /// the whole tree, and in front of the reply come more PropertiesChanged signals than a
    /// subscription buffers.
    @Test("a mirror that falls behind BlueZ's signals reads the whole tree again")
    func overflowRefreshes() async throws {
        try await World.with { world in
            let adapter = "/org/bluez/hci0"
            let flood = BusConnection.defaultSignalBufferLimit + 100
            let fake = try await world.connect()
            try await fake.addObjectManager(at: "/")
            try await fake.export(
                InterfaceSpec(name: "org.bluez.Adapter1", properties: [.init("Alias", .string("first"))]), at: adapter)
            // Writing Trigger (on the fake's bus thread, so nothing else is dispatched meanwhile)
            // takes the name org.bluez, which sends the mirror to GetManagedObjects, and floods it
            // before the reply can be sent.
            let trigger = InterfaceSpec.Property("Trigger", .bool(false)) { _ in
                try fake.assumeIsolated { fake in
                    try fake.requestName("org.bluez")
                    for i in 0..<flood {
                        try fake.emit(
                            "PropertiesChanged", interface: "org.freedesktop.DBus.Properties", at: adapter,
                            [.string("org.bluez.Adapter1"), .vardict(["Alias": .string("signal \(i)")]), .array(element: "s", [])])
                    }
                }
            }
            try await fake.export(InterfaceSpec(name: "org.glassd.TestFake", properties: [trigger]), at: "/t")
            let fakeName = try await fake.uniqueName()

            let bus = try await world.connect()
            let client = BlueZClient(bus: bus, logger: Logger(label: "test"))
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await client.run() }
                // The first look (no org.bluez yet) is done: the mirror is subscribed.
                try await client.state.wait { $0.initialized }
                #expect(!client.state.snapshot.present)
                _ = try await bus.call(
                    fakeName, path: "/t", interface: "org.freedesktop.DBus.Properties", member: "Set",
                    [.string("org.glassd.TestFake"), .string("Trigger"), .variant(.bool(true))])
                // The snapshot says "first"; applying the buffered signals moves Alias to "signal …",
                // and without a second snapshot it would stay there. Only a fresh read after the
                // flood brings "first" back.
                let flooded = Flag()
                try await client.state.wait { snapshot in
                    let alias = snapshot.properties(adapter, "org.bluez.Adapter1")?["Alias"]?.string
                    if alias?.hasPrefix("signal ") == true { flooded.set() }
                    return flooded.isSet && alias == "first"
                }
                #expect(client.state.snapshot.present)
                group.cancelAll()
            }
            await bus.close()
            await fake.close()
        }
    }
}
