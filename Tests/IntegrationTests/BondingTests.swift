// SPDX-License-Identifier: GPL-2.0-or-later
@testable import Bluetooth
import Concurrency
import DBusKit
import Foundation
import Frame
import Glasses
import LinkKit
import Logging
import Monocle
import Testing

private let worldReady = BLEWorld.available || ProcessInfo.processInfo.environment["GLASSD_REQUIRE_BLE"] != nil
/// Both kinds, as glassd will look for them: a Frame must bond, a Monocle must not.
private let bothKinds = LinkSettings(adapter: "hci0", scanTimeout: .seconds(5), kinds: [.monocle, .frame])

/// BlueZ's object (on the central, hci0) for the glasses on adapter `hci<index>`.
private func bluezDevice(_ index: Int) -> String {
    "/org/bluez/hci0/dev_" + BLEWorld.adapterAddress(index).replacingOccurrences(of: ":", with: "_")
}

/// A Device1 property as BlueZ answers it now (not the mirror).
private func deviceProperty(_ bus: BusConnection, _ index: Int, _ name: String) async throws -> DBusValue? {
    try await bus.call(
        "org.bluez", path: bluezDevice(index), interface: "org.freedesktop.DBus.Properties", member: "Get",
        [.string("org.bluez.Device1"), .string(name)]
    ).first?.unwrapped
}

/// Whether BlueZ holds a bond with the glasses on `hci<index>` now (no object: none).
private func bluezPaired(_ bus: BusConnection, _ index: Int) async -> Bool {
    (try? await deviceProperty(bus, index, "Paired")) == .bool(true)
}

/// Runs a Lua chunk on the Frame's channel and returns its first print.
private func lua(_ link: any GlassesLink, _ chunk: String) async throws -> String {
    let channel = try #require(link.channel(FrameChannel.lua))
    try await channel.write(Array(chunk.utf8))
    return try await within(.seconds(15), failure: { "no print came back from \(chunk)" }) {
        for await incoming in channel.incoming {
            // 0x01 starts data from frame.bluetooth.send; anything else is print output.
            if case .packet(let bytes) = incoming, bytes.first != 0x01 { return String(decoding: bytes, as: UTF8.self) }
        }
        throw TestFailure("the link dropped before \(chunk) printed")
    }
}

@Suite(
    "Bonding with glasses that need it", .timeLimit(.minutes(5)), .serialized,
    .enabled(if: worldReady, "the Python BLE world is not set up"))
struct BondingTests {
    @Test("Pair(\"\") finds a Frame and bonds; its link carries Lua; a drop reconnects without pairing again")
    func bondAndReconnect() async throws {
        try await BLEWorld.with { ble in
            try await ble.withFrame(1) { _ in
                try await ble.withSupervisor(settings: bothKinds) { supervisor, _ in
                    let bus = try await ble.world.connect()
                    let frame = VirtualFrame(bus: bus, index: 1)
                    #expect(try await !frame.bonded())
                    let events = await supervisor.events()
                    let address = try await supervisor.pair("")
                    #expect(address == BluetoothAddress(BLEWorld.adapterAddress(1)))
                    #expect(await supervisor.snapshot().devices.first { $0.address == address }?.kind == .frame)
                    // Both halves of the bond: the Frame's, and BlueZ's on the host.
                    #expect(try await frame.bonded())
                    #expect(try await deviceProperty(bus, 1, "Paired") == .bool(true))
                    #expect(try await deviceProperty(bus, 1, "Bonded") == .bool(true))
                    #expect(try await deviceProperty(bus, 1, "Trusted") == .bool(true))

                    let link = try await events.nextLink()
                    #expect(link.profile.name == GATTProfile.frame.name)
                    #expect(try await lua(link, "print(1+1)") == "2")

                    // The Frame goes off and on: the same bond serves the new link.
                    try await frame.call("PowerOff")
                    _ = try await events.nextDrop()
                    try await frame.call("PowerOn")
                    let again = try await events.nextLink()
                    #expect(try await lua(again, "print(2+3)") == "5")
                    #expect(await supervisor.pairCalls == 1)
                    #expect(await supervisor.snapshot().state == .connected)
                    await bus.close()
                }
            }
        }
    }

    @Test("Unpair removes the bond; the Frame then refuses to pair, with an error that says what to do, until its bond is reset")
    func unpairAndRefusal() async throws {
        try await BLEWorld.with { ble in
            try await ble.withFrame(1) { _ in
                try await ble.withSupervisor(settings: bothKinds) { supervisor, _ in
                    let bus = try await ble.world.connect()
                    let frame = VirtualFrame(bus: bus, index: 1)
                    let events = await supervisor.events()
                    let address = BLEWorld.adapterAddress(1)
                    _ = try await supervisor.pair(address)
                    _ = try await events.nextLink()

                    try await supervisor.unpair()
                    // BlueZ forgot the device and its bond before Unpair returned; the Frame keeps its half.
                    #expect(await !bluezPaired(bus, 1))
                    #expect(try await frame.bonded())

                    await #expect(throws: LinkError.bondLost) { try await supervisor.pair(address) }
                    #expect(LinkError.bondLost.message.contains("pin-hole"))
                    #expect(await supervisor.snapshot().paired == nil)
                    #expect(await supervisor.snapshot().state == .unpaired)

                    // The pin-hole reset: the Frame forgets its bond, and pairing works again.
                    try await frame.call("ResetBond")
                    #expect(try await !frame.bonded())
                    _ = try await supervisor.pair(address)
                    let link = try await events.nextLink()
                    #expect(try await frame.bonded())
                    #expect(try await lua(link, "print('again')") == "again")
                    await bus.close()
                }
            }
        }
    }

    @Test("BlueZ losing the bond behind glassd's back: reconnecting says to reset the glasses' bond, then pairs again once it is")
    func bondLostOnReconnect() async throws {
        var settings = bothKinds
        settings.reconnect = ReconnectPolicy(maximum: .seconds(2))
        try await BLEWorld.with { ble in
            try await ble.withFrame(1) { _ in
                try await ble.withSupervisor(settings: settings) { supervisor, _ in
                    let bus = try await ble.world.connect()
                    let frame = VirtualFrame(bus: bus, index: 1)
                    let events = await supervisor.events()
                    _ = try await supervisor.pair(BLEWorld.adapterAddress(1))
                    _ = try await events.nextLink()

                    // Someone removes the glasses from BlueZ (bluetoothctl remove): the host's half is gone.
                    _ = try await bus.call(
                        "org.bluez", path: "/org/bluez/hci0", interface: "org.bluez.Adapter1", member: "RemoveDevice",
                        [.objectPath(bluezDevice(1))])
                    _ = try await events.nextDrop()
                    for await change in supervisor.changeStream where change.reason == LinkError.bondLost.message { break }
                    #expect(await supervisor.snapshot().paired != nil)

                    try await frame.call("ResetBond")
                    let link = try await events.nextLink()
                    #expect(try await lua(link, "print(6*7)") == "42")
                    #expect(await bluezPaired(bus, 1))
                    #expect(await supervisor.pairCalls >= 3)
                    await bus.close()
                }
            }
        }
    }

    @Test("a Monocle still pairs without bonding when Frames are looked for too, and Unpair leaves it in BlueZ")
    func monocleDoesNotBond() async throws {
        try await BLEWorld.with { ble in
            try await ble.withMonocle(1, txPower: -50) { _ in
                try await ble.withSupervisor(settings: bothKinds) { supervisor, client in
                    let bus = try await ble.world.connect()
                    let events = await supervisor.events()
                    let address = try await supervisor.pair("")
                    #expect(address == BluetoothAddress(BLEWorld.adapterAddress(1)))
                    let link = try await events.nextLink()
                    #expect(link.profile.name == GATTProfile.monocle.name)
                    #expect(try await deviceProperty(bus, 1, "Paired") == .bool(false))
                    #expect(await supervisor.pairCalls == 0)

                    try await supervisor.unpair()
                    let device = bluezDevice(1)
                    try await client.state.wait { !$0.isConnected(device) }
                    #expect(client.state.snapshot.properties(device, "org.bluez.Device1") != nil)
                    await bus.close()
                }
            }
        }
    }

    @Test("the pairing agent is registered with each bluetoothd, answers only bluetoothd, and confirms only a device being paired")
    func agent() async throws {
        try await World.with { world in
            let ble = BLEWorld(world: world, venvPython: BLEWorld.venv + "/bin/python")
            let bus = try await world.connect()
            let client = BlueZClient(bus: bus, logger: Logger(label: "test"))
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await client.run() }
                // Registered with each bluetoothd; bluezoo shows it too, by
                // making its adapters pairable once an agent is registered.
                for arrival in UInt64(1)...2 {
                    try await ble.withBlueZ {
                        for await registered in client.agent.registered.values() where registered == arrival { break }
                        // bluezoo sets Pairable after RegisterAgent has returned.
                        try await client.state.wait {
                            $0.properties("/org/bluez/hci0", "org.bluez.Adapter1")?["Pairable"]?.bool == true
                        }
                    }
                }

                let stranger = try await world.connect()
                let agentName = try await bus.uniqueName()
                let device = bluezDevice(1)
                await #expect(throws: BusError(name: PairingAgent.rejected, message: "only bluetoothd may ask glassd's agent")) {
                    _ = try await stranger.call(
                        agentName, path: PairingAgent.path, interface: PairingAgent.interface, member: "RequestAuthorization",
                        [.objectPath(device)])
                }
                await stranger.close()

                let agent = client.agent
                for member in ["RequestConfirmation", "RequestAuthorization", "AuthorizeService"] {
                    #expect(throws: BusError.self) { try agent.answer(member, device: device) }
                }
                try await agent.whilePairing(device) { () async throws -> Void in
                    for member in ["RequestConfirmation", "RequestAuthorization", "AuthorizeService"] {
                        let reply = try agent.answer(member, device: device)
                        #expect(reply == [])
                    }
                    #expect(throws: BusError.self) { try agent.answer("RequestConfirmation", device: bluezDevice(2)) }
                    for member in ["RequestPinCode", "RequestPasskey", "DisplayPinCode", "DisplayPasskey"] {
                        #expect(throws: BusError.self) { try agent.answer(member, device: device) }
                    }
                }
                #expect(throws: BusError.self) { try agent.answer("RequestConfirmation", device: device) }
                group.cancelAll()
            }
            await bus.close()
        }
    }
}
