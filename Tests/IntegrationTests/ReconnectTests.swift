// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import Foundation
import GlassdAPI
import Testing

private let worldReady = BLEWorld.available || ProcessInfo.processInfo.environment["GLASSD_REQUIRE_BLE"] != nil
private let monocle = 2
private let address = BLEWorld.adapterAddress(monocle)
private let devicePath = GlassdBus.devicePath(address: address)
private let waiting = "Waiting for the glasses to come into range."

/// Reconnection end to end on the fake BlueZ and a virtual Monocle (the timings themselves are
/// measured by Scripts/bench; these check what happens, and that nothing leaks).
@Suite("Reconnecting", .timeLimit(.minutes(10)), .serialized, .enabled(if: worldReady, "the Python BLE world is not set up"))
struct ReconnectIntegrationTests {
    /// Device1 changes, as (property, value) pairs in order.
    private func deviceChanges(_ bus: BusConnection) async throws -> AsyncStream<(String, DBusValue)> {
        let signals = try await bus.signals(
            SignalMatch(path: devicePath, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"))
        let (stream, sink) = AsyncStream.makeStream(of: (String, DBusValue).self)
        Task {
            for await signal in signals where signal.arguments.first?.string == GlassdBus.deviceInterface {
                for (name, value) in (signal.arguments[1].stringKeyed ?? [:]).sorted(by: { $0.key < $1.key }) {
                    sink.yield((name, value.unwrapped))
                }
            }
            sink.finish()
        }
        return stream
    }

    private func property(_ bus: BusConnection, _ name: String) async throws -> DBusValue? {
        try await bus.call(
            GlassdBus.name, path: devicePath, interface: "org.freedesktop.DBus.Properties", member: "Get",
            [.string(GlassdBus.deviceInterface), .string(name)]
        ).first?.unwrapped
    }

    private func openFDs(_ pid: Int32) -> Int { (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? -1 }

    private func rssKiB(_ pid: Int32) -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") }
        return line.flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") } ?? 0
    }

    @Test("100 drops in quick succession: 100 reconnects, none waiting for the glasses, no re-pair; fds and RSS do not grow")
    func manyDrops() async throws {
        try await BLEWorld.with { ble in
            try await ble.withMonocle(monocle, txPower: -45) { _ in
                try await ble.world.withGlassd(config: try ble.writeConfig()) { glassd in
                    let bus = try await ble.world.connect()
                    var changes = try await deviceChanges(bus).makeAsyncIterator()
                    let pair = try await ble.world.glassctl(["pair", address])
                    #expect(pair.ok, "\(pair.stderr)")
                    func until(_ name: String, _ value: DBusValue) async -> [String] {
                        var reasons: [String] = []
                        while let (changed, now) = await changes.next() {
                            if changed == GlassdBus.DeviceProperty.stateReason, let reason = now.string { reasons.append(reason) }
                            if changed == name && now == value { break }
                        }
                        return reasons
                    }
                    _ = await until(GlassdBus.DeviceProperty.state, .string("ready"))
                    var reasons: [String] = []
                    var longest = Duration.zero
                    var warm: (fds: Int, rss: Int) = (0, 0)
                    for round in 1...100 {
                        let start = ContinuousClock.now
                        let drop = try await ble.bluez(["call", "org.bluez", "/org/bluezoo", "org.bluezoo.Test1", "DropLink", "s", address])
                        #expect(drop.ok, "round \(round): \(drop.stderr)")
                        reasons += await until(GlassdBus.DeviceProperty.connected, .bool(false))
                        reasons += await until(GlassdBus.DeviceProperty.state, .string("ready"))
                        longest = max(longest, ContinuousClock.now - start)
                        if round == 10 { warm = (openFDs(glassd.pid), rssKiB(glassd.pid)) }
                    }
                    print("100 drops: the longest from drop to ready took \(longest)")
                    #expect(!reasons.contains(waiting), "a drop made glassd wait for the glasses")
                    #expect(try await property(bus, GlassdBus.DeviceProperty.reconnectCount) == .uint32(100))
                    #expect(openFDs(glassd.pid) == warm.fds)
                    #expect(rssKiB(glassd.pid) - warm.rss < 4096, "RSS grew from \(warm.rss) to \(rssKiB(glassd.pid)) KiB")
                    let paired = try await ble.world.busctl(["get-property", GlassdBus.name, GlassdBus.managerPath, GlassdBus.managerInterface, "PairedDevice"])
                    #expect(paired.stdout == "o \"\(devicePath)\"\n")
                    await bus.close()
                }
            }
        }
    }

    @Test("glasses off for 75 s, then on: watched for, not retried; connected as soon as they advertise; no re-pair", .timeLimit(.minutes(4)))
    func offAndOn() async throws {
        try await BLEWorld.with { ble in
            try await ble.world.withGlassd(config: try ble.writeConfig()) { _ in
                let bus = try await ble.world.connect()
                var changes = try await deviceChanges(bus).makeAsyncIterator()
                try await ble.withMonocle(monocle, txPower: -45) { _ in
                    let pair = try await ble.world.glassctl(["pair", address])
                    #expect(pair.ok, "\(pair.stderr)")
                    while let (name, value) = await changes.next(), !(name == GlassdBus.DeviceProperty.state && value == .string("ready")) {}
                }
                // Switched off: one failed attempt, then glassd watches for the glasses.
                while let (name, value) = await changes.next(), !(name == GlassdBus.DeviceProperty.stateReason && value == .string(waiting)) {}
                #expect(try await property(bus, GlassdBus.DeviceProperty.state) == .string("disconnected"))
                // The scenario: away for 75 s, between the guard's tries at 60 and 90 s (back at 90 s, the
                // try then could find them advertising but not yet seen, and fail: seen under load).
                try await Task.sleep(for: .seconds(75))
                // The rewatch guard tries every 30 s; nothing else does.
                let failedAway = ble.world.log().components(separatedBy: "connecting failed").count - 1
                #expect(failedAway <= 4, "\(failedAway) failed attempts while the glasses were away")
                try await ble.withMonocle(monocle, txPower: -45) { _ in
                    // Counted once they advertise.
                    let failedBefore = ble.world.log().components(separatedBy: "connecting failed").count - 1
                    let back = ContinuousClock.now
                    while let (name, value) = await changes.next(), !(name == GlassdBus.DeviceProperty.connected && value == .bool(true)) {}
                    print("glasses back: connected after \(ContinuousClock.now - back)")
                    while let (name, value) = await changes.next(), !(name == GlassdBus.DeviceProperty.state && value == .string("ready")) {}
                    // Connected on sight: no attempt failed after they came back.
                    #expect(ble.world.log().components(separatedBy: "connecting failed").count - 1 == failedBefore)
                    let count = try await property(bus, GlassdBus.DeviceProperty.reconnectCount)
                    #expect(count == .uint32(1))
                }
                await bus.close()
            }
        }
    }
}
