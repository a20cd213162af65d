// SPDX-License-Identifier: GPL-2.0-or-later
@testable import Bluetooth
import DBusKit
import FakeKinds
import GlassdAPI
import Foundation
import Glasses
import LinkKit
import Testing

/// Glasses made of two radios (the test-only twin kind: one per arm, as Even Realities G1 are),
/// on two virtual peripherals of the test world: the link library pairs them as one, is up only
/// while both arms are, and carries bytes on each.
@Suite(
    "Glasses of two radios", .timeLimit(.minutes(3)),
    .enabled(if: BLEWorld.available || ProcessInfo.processInfo.environment["GLASSD_REQUIRE_BLE"] != nil))
struct TwoRadioGlassesTests {
    static let left = 1, right = 2, stray = 3
    let settings = LinkSettings(adapter: "hci0", scanTimeout: .seconds(5), scanSettle: .milliseconds(300), kinds: [twin()])

    /// The two arms of pair 7 (and `more`, on other adapters) running until `body` returns.
    private func withArms<R: Sendable>(_ ble: BLEWorld, _ body: () async throws -> R) async throws -> R {
        try await ble.withMonocle(Self.left, txPower: -45, echo: true, name: "Twin_7_L") { _ in
            try await ble.withMonocle(Self.right, txPower: -50, echo: true, name: "Twin_7_R") { _ in try await body() }
        }
    }

    private func up(_ events: AsyncStream<LinkEvent>) async throws -> any GlassesLink {
        for await event in events {
            if case .up(let link, _) = event { return link }
        }
        throw TestFailure("the link events ended before a link came up")
    }

    /// Writes `bytes` on `channel` and reads its echo.
    private func echo(_ channel: any ByteChannel, _ bytes: [UInt8]) async throws -> [UInt8] {
        async let echoed: [UInt8] = {
            var got: [UInt8] = []
            for await piece in channel.incoming {
                guard case .packet(let packet) = piece else { break }
                got += packet
                if got.count >= bytes.count { break }
            }
            return got
        }()
        try await channel.write(bytes)
        return await echoed
    }

    @Test("Pair(\"\") pairs both arms as one; the link is up when both are and speaks to each; a drop of one arm reconnects both")
    func pairsBothArms() async throws {
        let leftAddress = try #require(BluetoothAddress(BLEWorld.adapterAddress(Self.left)))
        let rightAddress = try #require(BluetoothAddress(BLEWorld.adapterAddress(Self.right)))
        try await BLEWorld.with { ble in
            try await withArms(ble) {
                try await ble.withSupervisor(settings: settings) { supervisor, _ in
                    let events = await supervisor.events()
                    #expect(try await supervisor.pair("") == leftAddress)  // the first arm names the pair
                    let link = try await up(events)
                    #expect(link.profile.name == "twin")
                    let snapshot = await supervisor.snapshot()
                    #expect(snapshot.state == .connected)
                    #expect(snapshot.devices.count == 1, "one pair of glasses, not two devices: \(snapshot.devices)")
                    #expect(
                        snapshot.devices.first?.radios == [
                            .init(address: leftAddress, role: "left", state: .connected),
                            .init(address: rightAddress, role: "right", state: .connected),
                        ])
                    #expect(snapshot.devices.first?.kind == .twin)
                    // Each arm's channel reaches that arm: two echoes, each its own bytes.
                    let leftUART = try #require(link.channel(RadioChannel.named("uart", on: "left")))
                    let rightUART = try #require(link.channel(RadioChannel.named("uart", on: "right")))
                    #expect(link.channel("uart") == nil)
                    let toLeft = Array("left arm".utf8), toRight = Array("right arm, longer".utf8)
                    #expect(try await echo(leftUART, toLeft) == toLeft)
                    #expect(try await echo(rightUART, toRight) == toRight)

                    // One arm drops: the pair's link goes down, both arms reconnect, it comes back up.
                    let drop = try await ble.bluez(["call", "org.bluez", "/org/bluezoo", "org.bluezoo.Test1", "DropLink", "s", rightAddress.description])
                    #expect(drop.ok, "\(drop.stderr)")
                    _ = try await events.nextDrop()
                    let again = try await up(events)
                    let back = await supervisor.snapshot()
                    #expect(back.devices.first?.reconnectCount == 1)
                    #expect(back.devices.first?.radios.map(\.state) == [.connected, .connected])
                    let rightAgain = try #require(again.channel(RadioChannel.named("uart", on: "right")))
                    #expect(try await echo(rightAgain, toRight) == toRight)
                    try await supervisor.unpair()
                    #expect(await supervisor.snapshot().devices.allSatisfy { $0.state == .unpaired })
                }
            }
        }
    }

    @Test("one arm alone is not a pair: Pair says which arm did not appear, and nothing is paired")
    func oneArmIsNotAPair() async throws {
        try await BLEWorld.with { ble in
            try await ble.withMonocle(Self.stray, txPower: -45, echo: true, name: "Twin_9_L") { _ in
                try await ble.withSupervisor(settings: settings) { supervisor, _ in
                    await #expect(throws: LinkError.notFound("Only part of Twin_9_L is in range: its right radio did not appear.")) {
                        try await supervisor.pair(BLEWorld.adapterAddress(Self.stray))
                    }
                    let snapshot = await supervisor.snapshot()
                    #expect(snapshot.paired == nil)
                    #expect(snapshot.devices.first?.radios.map(\.role) == ["left"])
                }
            }
        }
    }

    @Test("a glassd that registers the twin kind shows both arms as one Device1: Kind, Radios, Components; Unpair forgets both")
    func throughGlassd() async throws {
        let left = BLEWorld.adapterAddress(Self.left), right = BLEWorld.adapterAddress(Self.right)
        let path = GlassdBus.devicePath(address: left)
        try await BLEWorld.with { ble in
            try await withArms(ble) {
                try await ble.world.withGlassd(config: try ble.writeConfig(), executable: Paths.twinDaemon) { _ in
                    let bus = try await ble.world.connect()
                    let pair = try await ble.world.glassctl(["pair"])
                    #expect(pair.ok, "\(pair.stderr)")
                    #expect(pair.stdout.contains(path), "\(pair.stdout)")
                    let both = DBusValue.array(
                        element: "(sss)",
                        [
                            .structure([.string(left), .string("left"), .string("connected")]),
                            .structure([.string(right), .string("right"), .string("connected")]),
                        ])
                    try await waitForProperty(
                        bus, destination: GlassdBus.name, path: path, interface: GlassdBus.deviceInterface, "Radios", equals: both)
                    let listed = try await ble.world.glassctl(["devices", "--json"])
                    let devices = try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]]
                    #expect(devices?.count == 1, "one object for the pair: \(listed.stdout)")
                    #expect(devices?.first?["kind"] as? String == "twin")
                    #expect((devices?.first?["radios"] as? [[String: String]])?.map { $0["role"] } == ["left", "right"])
                    let components = try await bus.call(
                        GlassdBus.name, path: path, interface: "org.freedesktop.DBus.Properties", member: "Get",
                        [.string(GlassdBus.deviceInterface), .string("Components")])
                    #expect(components.first == .variant(.dict(key: "s", value: "s", [.init(.string("arm"), .string(""))])))
                    let text = try await ble.world.glassctl(["devices"])
                    #expect(text.stdout.contains("left: \(left) connected"), "\(text.stdout)")
                    #expect(try await ble.world.glassctl(["unpair"]).ok)
                    try await waitForProperty(
                        bus, destination: GlassdBus.name, path: path, interface: GlassdBus.deviceInterface, "State",
                        equals: .string("unpaired"))
                    await bus.close()
                }
            }
        }
    }
}
