// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import Foundation
import FoundationXML
import GlassdAPI
import Subprocess
import SystemPackage
import Testing

private let worldReady = BLEWorld.available || ProcessInfo.processInfo.environment["GLASSD_REQUIRE_BLE"] != nil

/// The virtual Monocles of these tests: adapter index and advertised TX power (= RSSI seen).
private let monocles: [(index: Int, tx: Int)] = [(1, -70), (2, -45), (3, -80)]
private let strongest = BLEWorld.adapterAddress(2)

@Suite("Glasses link over BlueZ", .timeLimit(.minutes(10)), .serialized, .enabled(if: worldReady, "the Python BLE world is not set up"))
struct LinkIntegrationTests {
    /// Runs `body` with three virtual Monocles advertising and glassd running.
    private func withThreeMonocles(
        reconnectMax: Int = 5, _ body: (BLEWorld, Glassd, BusConnection) async throws -> Void
    ) async throws {
        try await BLEWorld.with { ble in
            try await ble.withMonocle(monocles[0].index, txPower: monocles[0].tx) { _ in
                try await ble.withMonocle(monocles[1].index, txPower: monocles[1].tx) { _ in
                    try await ble.withMonocle(monocles[2].index, txPower: monocles[2].tx) { _ in
                        let config = try ble.writeConfig(reconnectMax: reconnectMax)
                        try await ble.world.withGlassd(config: config) { glassd in
                            let bus = try await ble.world.connect()
                            try await body(ble, glassd, bus)
                            await bus.close()
                        }
                    }
                }
            }
        }
    }

    private func managerState(_ bus: BusConnection, _ state: String, timeout: Duration = .seconds(30)) async throws {
        try await waitForProperty(
            bus, destination: GlassdBus.name, path: GlassdBus.managerPath, interface: GlassdBus.managerInterface,
            "State", equals: .string(state), timeout: timeout)
    }

    /// The same, with glassd's and the fake BlueZ's logs in the failure, for a post-mortem.
    private func managerState(_ bus: BusConnection, _ state: String, in ble: BLEWorld, timeout: Duration = .seconds(30)) async throws {
        do {
            try await managerState(bus, state, timeout: timeout)
        } catch {
            let bluez = (try? String(contentsOfFile: ble.world.directory + "/bluez.log", encoding: .utf8)) ?? ""
            throw TestFailure("\(error)\n--- glassd:\n\(ble.world.log().suffix(4000))\n--- bluez:\n\(bluez.suffix(2000))")
        }
    }

    private func device(_ bus: BusConnection, _ address: String, _ name: String) async throws -> DBusValue? {
        let reply = try await bus.call(
            GlassdBus.name, path: GlassdBus.devicePath(address: address), interface: "org.freedesktop.DBus.Properties",
            member: "Get", [.string(GlassdBus.deviceInterface), .string(name)])
        if case .variant(let v)? = reply.first { return v }
        return nil
    }

    @Test("Scan lists the Monocles strongest first; Pair(\"\") picks the strongest and connects, every state change signalled")
    func pairNearest() async throws {
        try await withThreeMonocles { ble, _, bus in
            let scan = try await ble.world.glassctl(["scan", "--seconds", "2", "--json"])
            let seen = try JSONSerialization.jsonObject(with: Data(scan.stdout.utf8)) as? [[String: Any]]
            #expect(seen?.compactMap { $0["address"] as? String } == [2, 1, 3].map(BLEWorld.adapterAddress))
            #expect(seen?.compactMap { $0["rssi"] as? Int } == [-45, -70, -80])

            let states = try await bus.signals(SignalMatch(path: GlassdBus.managerPath, member: "PropertiesChanged"))
            let pair = try await ble.world.callManager("Pair", "s", [""])
            #expect(pair.ok, "\(pair.stderr)")
            #expect(pair.stdout.contains(GlassdBus.devicePath(address: strongest)))
            try await managerState(bus, "ready")
            var seenStates: [String] = []
            for await signal in states {
                if let s = signal.arguments[1].stringKeyed?["State"]?.string { seenStates.append(s) }
                if seenStates.last == "ready" { break }
            }
            #expect(seenStates == ["disconnected", "connecting", "handshake", "checking", "uploading", "starting", "ready"])
            let paired = try await ble.world.busctl(["get-property", GlassdBus.name, GlassdBus.managerPath, GlassdBus.managerInterface, "PairedDevice"])
            #expect(paired.stdout == "o \"\(GlassdBus.devicePath(address: strongest))\"\n")
            #expect(try await device(bus, strongest, "Connected") == .bool(true))
            #expect(try await device(bus, strongest, "RSSI") == .int16(-45))
            #expect(try await device(bus, strongest, "Name") == .string("monocle"))
            if case .uint64(let seen)? = try await device(bus, strongest, "LastSeen") {
                #expect(abs(Double(seen) / 1000 - Date().timeIntervalSince1970) < 60)
            } else {
                Issue.record("LastSeen is not a t")
            }
            let devices = try await ble.world.glassctl(["devices", "--json"])
            let listed = try JSONSerialization.jsonObject(with: Data(devices.stdout.utf8)) as? [[String: Any]]
            #expect(listed?.count == 3)
            #expect(listed?.first { $0["address"] as? String == strongest }?["state"] as? String == "ready")
            #expect(listed?.filter { $0["state"] as? String == "unpaired" }.count == 2)
            #expect(listed?.allSatisfy { $0["kind"] as? String == "monocle" } == true, "\(listed ?? [])")
            let radios = listed?.first { $0["address"] as? String == strongest }?["radios"] as? [[String: String]]
            #expect(radios == [["address": strongest, "role": "main", "state": "connected"]])

            // The device object matches its documented interface.
            let live = try await ble.world.busctl(
                ["call", GlassdBus.name, GlassdBus.devicePath(address: strongest), "org.freedesktop.DBus.Introspectable", "Introspect"])
            let file = try String(contentsOfFile: Paths.root + "/dbus/org.glassd.Device1.xml", encoding: .utf8)
            let liveMembers = try interfaceMembers(unescapeBusctlString(live.stdout), GlassdBus.deviceInterface)
            #expect(liveMembers.count == 17)  // Components, Radios and Charging included
            // A Monocle is one radio, connected with the glasses.
            #expect(
                try await device(bus, strongest, "Radios")
                    == .array(element: "(sss)", [.structure([.string(strongest), .string("main"), .string("connected")])]))
            #expect(try interfaceMembers(file, GlassdBus.deviceInterface) == liveMembers)

            let status = try await ble.world.glassctl(["status"])
            #expect(status.stdout.contains("glasses: ready"))
            #expect(status.stdout.contains(strongest))
        }
    }

    @Test("Pair(address) pairs that one; errors: InvalidArgs, AlreadyPaired, NotFound, NotPaired")
    func pairByAddressAndErrors() async throws {
        try await withThreeMonocles { ble, _, bus in
            for bad in ["nonsense", "00:00:00:00:00", "00:00:00:00:00:GG"] {
                let result = try await ble.world.glassctl(["pair", bad])
                #expect(result.stderr.hasSuffix("(org.freedesktop.DBus.Error.InvalidArgs)\n"), "\(bad): \(result.stderr)")
            }
            let notPaired = try await ble.world.glassctl(["unpair"])
            #expect(notPaired.stderr.hasSuffix("(\(GlassdErrorName.notPaired))\n"))
            let missing = try await ble.world.glassctl(["pair", "00:00:00:00:00:99"])
            #expect(missing.stderr.hasSuffix("(\(GlassdErrorName.notFound))\n"), "\(missing.stderr)")

            let weakest = BLEWorld.adapterAddress(3)
            let pair = try await ble.world.glassctl(["pair", weakest.lowercased()])
            #expect(pair.stdout == GlassdBus.devicePath(address: weakest) + "\n", "\(pair.stderr)")
            try await managerState(bus, "ready")
            let again = try await ble.world.glassctl(["pair", weakest])
            #expect(again.ok)
            let other = try await ble.world.glassctl(["pair", strongest])
            #expect(other.stderr.hasSuffix("(\(GlassdErrorName.alreadyPaired))\n"))

            let unpair = try await ble.world.glassctl(["unpair"])
            #expect(unpair.ok)
            try await managerState(bus, "unpaired")
            let paired = try await ble.world.busctl(["get-property", GlassdBus.name, GlassdBus.managerPath, GlassdBus.managerInterface, "PairedDevice"])
            #expect(paired.stdout == "o \"/\"\n")
            // The BlueZ link is gone too.
            let bluezDevice = "/org/bluez/hci0/dev_" + weakest.replacingOccurrences(of: ":", with: "_")
            try await waitForProperty(bus, destination: "org.bluez", path: bluezDevice, interface: "org.bluez.Device1", "Connected", equals: .bool(false))
        }
    }

    @Test("a client that reads PairedDevice and State right after Pair or Unpair returns sees that call's effect (five rounds)")
    func replyAfterEffect() async throws {
        try await withThreeMonocles { _, _, bus in
            func manager(_ name: String) async throws -> DBusValue? {
                try await bus.call(
                    GlassdBus.name, path: GlassdBus.managerPath, interface: "org.freedesktop.DBus.Properties", member: "Get",
                    [.string(GlassdBus.managerInterface), .string(name)]
                ).first?.unwrapped
            }
            for round in 1...5 {
                let reply = try await bus.call(
                    GlassdBus.name, path: GlassdBus.managerPath, interface: GlassdBus.managerInterface, member: "Pair", [.string(strongest)])
                let device = try #require(reply.first)
                #expect(try await manager(GlassdBus.Property.pairedDevice) == device, "round \(round)")
                #expect(try await manager(GlassdBus.Property.state) != .string("unpaired"), "round \(round)")
                _ = try await bus.call(GlassdBus.name, path: GlassdBus.managerPath, interface: GlassdBus.managerInterface, member: "Unpair")
                #expect(try await manager(GlassdBus.Property.pairedDevice) == .objectPath("/"), "round \(round)")
                #expect(try await manager(GlassdBus.Property.state) == .string("unpaired"), "round \(round)")
            }
        }
    }

    @Test("a concurrent Pair is Busy; a missing adapter is NoAdapter")
    func busyAndNoAdapter() async throws {
        try await withThreeMonocles { ble, _, bus in
            async let first = ble.world.glassctl(["pair"])
            // The first is scanning (and then settles for 2 s) once hci0 discovers.
            try await waitForProperty(
                bus, destination: "org.bluez", path: "/org/bluez/hci0", interface: "org.bluez.Adapter1", "Discovering",
                equals: .bool(true))
            let second = try await ble.world.glassctl(["pair"])
            #expect(second.stderr.hasSuffix("(\(GlassdErrorName.busy))\n"), "\(second.stderr)")
            #expect(try await first.ok)
        }
        try await BLEWorld.with { ble in
            let config = try ble.writeConfig()
            try (String(contentsOfFile: config, encoding: .utf8).replacingOccurrences(of: "hci0", with: "hci9"))
                .write(toFile: config, atomically: true, encoding: .utf8)
            try await ble.world.withGlassd(config: config) { _ in
                let pair = try await ble.world.glassctl(["pair"])
                #expect(pair.stderr.hasSuffix("(\(GlassdErrorName.noAdapter))\n"), "\(pair.stderr)")
                let scan = try await ble.world.glassctl(["scan", "--seconds", "0"])
                #expect(scan.stderr.hasSuffix("(\(GlassdErrorName.noAdapter))\n"))
            }
        }
    }

    @Test("at start-up glassd reconnects to the stored device; glassctl watch shows it happen")
    func reconnectAtStartup() async throws {
        try await BLEWorld.with { ble in
            try await ble.withMonocle(2, txPower: -45) { _ in
                let config = try ble.writeConfig()
                try await ble.world.withGlassd(config: config) { _ in
                    let bus = try await ble.world.connect()
                    let pair = try await ble.world.callManager("Pair", "s", [""])
                    #expect(pair.ok, "\(pair.stderr)")
                    try await managerState(bus, "ready", in: ble)
                    await bus.close()
                }
                try await ble.world.withGlassd(config: config) { _ in
                    let bus = try await ble.world.connect()
                    try await managerState(bus, "ready", in: ble)
                    await bus.close()
                    // glassctl watch: the state first, then each change of a dropped and restored link.
                    let states = try await watchStates(ble.world, count: 7) {
                        _ = try await ble.bluez(["call", "org.bluez", "/org/bluezoo", "org.bluezoo.Test1", "DropLink", "s", strongest])
                    }
                    // The scripts are current and running: no upload this time.
                    #expect(states == ["ready", "disconnected", "connecting", "handshake", "checking", "starting", "ready"])
                }
            }
        }
    }

    @Test("a dropped link reconnects and ReconnectCount goes up")
    func dropAndReconnect() async throws {
        try await withThreeMonocles { ble, _, bus in
            let pair = try await ble.world.callManager("Pair", "s", [strongest])
            #expect(pair.ok, "\(pair.stderr)")
            try await managerState(bus, "ready")
            for round in 1...2 {
                let drop = try await ble.bluez(["call", "org.bluez", "/org/bluezoo", "org.bluezoo.Test1", "DropLink", "s", strongest])
                #expect(drop.ok, "\(drop.stderr)")
                try await waitForProperty(
                    bus, destination: GlassdBus.name, path: GlassdBus.devicePath(address: strongest),
                    interface: GlassdBus.deviceInterface, "ReconnectCount", equals: .uint32(UInt32(round)))
                try await managerState(bus, "ready")
            }
        }
    }

    @Test("adapter power off and on: the link comes back")
    func adapterPowerCycle() async throws {
        try await withThreeMonocles { ble, _, bus in
            let pair = try await ble.world.callManager("Pair", "s", [strongest])
            #expect(pair.ok, "\(pair.stderr)")
            try await managerState(bus, "ready")
            let off = try await ble.bluez(["set-property", "org.bluez", "/org/bluez/hci0", "org.bluez.Adapter1", "Powered", "b", "false"])
            #expect(off.ok, "\(off.stderr)")
            try await managerState(bus, "disconnected")
            let on = try await ble.bluez(["set-property", "org.bluez", "/org/bluez/hci0", "org.bluez.Adapter1", "Powered", "b", "true"])
            #expect(on.ok)
            try await managerState(bus, "ready")
            #expect(try await device(bus, strongest, "ReconnectCount") == .uint32(1))
        }
    }

    @Test("Unpair while waiting to reconnect stops all attempts")
    func unpairDuringBackoff() async throws {
        try await BLEWorld.with { ble in
            let config = try ble.writeConfig(reconnectMax: 60)
            try await ble.world.withGlassd(config: config) { _ in
                let bus = try await ble.world.connect()
                try await ble.withMonocle(2, txPower: -45) { monocle in
                    _ = try await ble.world.callManager("Pair", "s", [strongest])
                    try await managerState(bus, "ready")
                    monocle.kill9()
                    try await managerState(bus, "disconnected")
                }
                let unpair = try await ble.world.glassctl(["unpair"])
                #expect(unpair.ok)
                let attemptsBefore = ble.world.log().components(separatedBy: "link connecting").count
                // The Monocle is back: an unpaired glassd must leave it alone.
                try await ble.withMonocle(2, txPower: -45) { _ in
                    try await Task.sleep(for: .seconds(4))  // long enough for several attempts, had any been left
                }
                #expect(ble.world.log().components(separatedBy: "link connecting").count == attemptsBefore)
                let state = try await ble.world.busctl(["get-property", GlassdBus.name, GlassdBus.managerPath, GlassdBus.managerInterface, "State"])
                #expect(state.stdout == "s \"unpaired\"\n")
                await bus.close()
            }
        }
    }

    @Test("bluetoothd restarting: glassd reconnects on its own")
    func bluezRestart() async throws {
        try await World.with { world in
            let ble = BLEWorld(world: world, venvPython: BLEWorld.venv + "/bin/python")
            try await world.withGlassd(config: try ble.writeConfig()) { _ in
                let bus = try await world.connect()
                // The Monocle outlives bluetoothd and registers again when it comes back.
                try await ble.withMonocle(2, txPower: -45, waitReady: false) { _ in
                    try await ble.withBlueZ {
                        _ = try await world.callManager("Pair", "s", [strongest])
                        try await managerState(bus, "ready")
                    }
                    try await managerState(bus, "disconnected")
                    try await ble.withBlueZ {
                        try await managerState(bus, "ready")
                    }
                }
                await bus.close()
            }
        }
    }
}

/// The State values `glassctl watch --json` prints: the first at once, then `count - 1` more after
/// `action` runs (which it does once the watch has shown it is subscribed).
private func watchStates(_ world: World, count: Int, after action: @Sendable () async throws -> Void) async throws -> [String] {
    let result = try await run(
        .path(FilePath(Paths.glassctl)), arguments: ["watch", "--bus", "session", "--json"],
        environment: .inherit.updating(["DBUS_SESSION_BUS_ADDRESS": world.busAddress]), input: .none,
        output: .sequence, error: .discarded
    ) { execution in
        var states: [String] = []
        for try await line in execution.standardOutput.strings() {
            guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String],
                object["path"] == GlassdBus.managerPath, object["property"] == "State", let value = object["value"]
            else { continue }
            states.append(value)
            if states.count == 1 { try await action() }
            if states.count == count { break }
        }
        await execution.teardown(using: [.gracefulShutDown(allowedDurationToNextStep: .seconds(2))])
        return states
    }
    return result.closureResult
}
