// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import Foundation
import GlassdAPI
import Monocle
import Testing
import Glasses

private let worldReady = BLEWorld.available || ProcessInfo.processInfo.environment["GLASSD_REQUIRE_BLE"] != nil
private let monocle = 2
private let address = BLEWorld.adapterAddress(monocle)
private let devicePath = GlassdBus.devicePath(address: address)

/// The Monocle session end to end: glassd on a private bus, the fake BlueZ, and a virtual Monocle
/// whose REPL is a real MicroPython running the scripts glassd uploads.
@Suite("Monocle session on a virtual Monocle", .timeLimit(.minutes(10)), .serialized, .enabled(if: worldReady, "the Python BLE world is not set up"))
struct SessionIntegrationTests {
    /// Runs `body` with one virtual Monocle (battery 87 %) and glassd, not yet paired.
    private func withSession(_ body: (BLEWorld, BusConnection, VirtualMonocle) async throws -> Void) async throws {
        try await BLEWorld.with { ble in
            try await ble.withSession(monocle) { bus, vm in try await body(ble, bus, vm) }
        }
    }

    private func deviceProperty(_ bus: BusConnection, _ name: String) async throws -> DBusValue? {
        let reply = try await bus.call(
            GlassdBus.name, path: devicePath, interface: "org.freedesktop.DBus.Properties", member: "Get",
            [.string(GlassdBus.deviceInterface), .string(name)])
        return reply.first?.unwrapped
    }

    /// Device1.State values from now on, until `last` (then stops), after `action` runs.
    private func deviceStates(
        _ bus: BusConnection, until last: String, timeout: Duration = .seconds(60), after action: () async throws -> Void
    ) async throws -> [String] {
        let changes = try await bus.signals(
            SignalMatch(path: devicePath, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"))
        try await action()
        return try await within(timeout, failure: { "Device1.State did not reach \(last) within \(timeout)" }) {
            var states: [String] = []
            for await signal in changes where signal.arguments.first?.string == GlassdBus.deviceInterface {
                guard let state = signal.arguments[1].stringKeyed?[GlassdBus.DeviceProperty.state]?.string else { continue }
                states.append(state)
                if state == last { return states }
            }
            throw TestFailure("signals ended; states so far: \(states)")
        }
    }

    private func pairAndWaitReady(_ ble: BLEWorld, _ bus: BusConnection) async throws -> [String] {
        try await deviceStates(bus, until: "ready") {
            let pair = try await ble.world.glassctl(["pair", address])
            #expect(pair.ok, "\(pair.stderr)")
        }
    }

    private func scriptFiles(_ ble: BLEWorld) -> [String: Data] {
        var files: [String: Data] = [:]
        for file in DeviceScripts.bundled.files {
            files[file.name] = FileManager.default.contents(atPath: ble.filesystem(monocle) + "/" + file.name)
        }
        return files
    }

    private func modificationTimes(_ ble: BLEWorld) throws -> [String: Date] {
        var times: [String: Date] = [:]
        for file in DeviceScripts.bundled.files {
            let attributes = try FileManager.default.attributesOfItem(atPath: ble.filesystem(monocle) + "/" + file.name)
            times[file.name] = attributes[.modificationDate] as? Date
        }
        return times
    }

    /// The scripts on the virtual device are glassd's, main.py stamped with their version.
    private func expectScriptsInstalled(_ ble: BLEWorld) {
        let scripts = DeviceScripts.bundled
        let files = scriptFiles(ble)
        for file in scripts.files {
            #expect(files[file.name].map(Array.init) == scripts.uploaded(file), "\(file.name)")
        }
        let leftovers = (try? FileManager.default.contentsOfDirectory(atPath: ble.filesystem(monocle)))?.filter {
            $0.hasSuffix(ScriptUpload.temporarySuffix)
        }
        #expect(leftovers == [])
    }

    @Test("pair: handshake, checking, uploading, starting, ready, each a PropertiesChanged; versions and battery read; the scripts carry the version")
    func freshDevice() async throws {
        try await withSession { ble, bus, vm in
            let states = try await pairAndWaitReady(ble, bus)
            #expect(states.drop { $0 != "connecting" } == ["connecting", "handshake", "checking", "uploading", "starting", "ready"])
            expectScriptsInstalled(ble)
            // The scripts (over 4 KiB) went as binary chunks on the data channel, none lost.
            let size = DeviceScripts.bundled.files.reduce(0) { $0 + DeviceScripts.bundled.uploaded($1).count }
            let chunks = Int64(size / (256 - 3 - FPGACommands.dataHeader))
            let streamed = try await vm.stats()["data_messages_in"] ?? 0
            #expect(streamed >= chunks, "\(streamed) data-channel messages for \(size) bytes of scripts")
            let version = DeviceScripts.bundled.version
            #expect(try await deviceProperty(bus, "ScriptsVersion") == .string(version))
            #expect(try await deviceProperty(bus, "FirmwareVersion") == .string("v23.248.0754"))
            #expect(try await deviceProperty(bus, "FPGAVersion") == .string("v23.230.0808"))
            // The Monocle kind's components, as its updaters name them.
            let components = try await deviceProperty(bus, "Components")?.stringKeyed?.mapValues(\.string)
            #expect(components == ["firmware": "v23.248.0754", "fpga": "v23.230.0808"])
            #expect(try await deviceProperty(bus, "Battery") == .byte(87))
            #expect(try await deviceProperty(bus, "StateReason") == .string(""))
            // The welcome screen, once, after the upload.
            try await vm.waitForDisplay(containing: "glassd")
            let status = try await ble.world.glassctl(["status"])
            #expect(status.stdout.contains("glasses: ready"))
            #expect(status.stdout.contains("battery: 87 %"))
            #expect(status.stdout.contains("firmware v23.248.0754, FPGA v23.230.0808"))
        }
    }

    @Test("Display shows the text on the glasses, transliterated; too long is InvalidArgs; not paired is an error")
    func display() async throws {
        try await withSession { ble, bus, vm in
            let unpaired = try await ble.world.glassctl(["display", "hello"])
            #expect(unpaired.stderr.hasSuffix("(\(GlassdErrorName.notPaired))\n"), "\(unpaired.stderr)")
            _ = try await pairAndWaitReady(ble, bus)
            let shown = try await vm.waitForDisplay(containing: "Grusse aus Koln") {
                let result = try await ble.world.glassctl(["display", "Grüße aus Köln — “hello”"])
                #expect(result.ok, "\(result.stderr)")
            }
            #expect(shown.contains("\"hello\""))
            // Long text is wrapped and scrolled by the scripts; it arrives whole (its end is shown).
            let long = (1...60).map { "word\($0)" }.joined(separator: " ")
            try await vm.waitForDisplay(containing: "word60") {
                let result = try await ble.world.glassctl(["display", long])
                #expect(result.ok, "\(result.stderr)")
            }
            let tooLong = try await ble.world.busctl(
                ["call", GlassdBus.name, devicePath, GlassdBus.deviceInterface, "Display", "s", String(repeating: "x", count: 4097)])
            #expect(tooLong.stderr.contains("Display takes at most 4096 bytes"), "\(tooLong.stderr)")
        }
    }

    @Test("a reconnect to a current device uploads nothing and reboots nothing")
    func reconnectIsCheap() async throws {
        try await withSession { ble, bus, vm in
            _ = try await pairAndWaitReady(ble, bus)
            let times = try modificationTimes(ble)
            let before = try await vm.stats()
            let states = try await deviceStates(bus, until: "ready") {
                _ = try await ble.bluez(["call", "org.bluez", "/org/bluezoo", "org.bluezoo.Test1", "DropLink", "s", address])
            }
            #expect(states.drop { $0 != "connecting" } == ["connecting", "handshake", "checking", "starting", "ready"])
            #expect(try modificationTimes(ble) == times)
            let after = try await vm.stats()
            #expect(after["soft_reboots"] == before["soft_reboots"])
            #expect(after["boots"] == before["boots"])
            // The resumed scripts still answer.
            try await vm.waitForDisplay(containing: "after reconnect") {
                let result = try await ble.world.glassctl(["display", "after reconnect"])
                #expect(result.ok, "\(result.stderr)")
            }
        }
    }

    @Test("a link drop in the middle of an upload ends in a complete, correct upload after reconnecting")
    func dropDuringUpload() async throws {
        try await withSession { ble, bus, _ in
            let uploading = try await deviceStates(bus, until: "uploading") {
                let pair = try await ble.world.glassctl(["pair", address])
                #expect(pair.ok, "\(pair.stderr)")
            }
            #expect(uploading.last == "uploading")
            let states = try await deviceStates(bus, until: "ready") {
                let drop = try await ble.bluez(["call", "org.bluez", "/org/bluezoo", "org.bluezoo.Test1", "DropLink", "s", address])
                #expect(drop.ok, "\(drop.stderr)")
            }
            #expect(states.contains("disconnected"))
            #expect(states.drop { $0 != "handshake" }.contains("uploading"))
            expectScriptsInstalled(ble)
            #expect(try await deviceProperty(bus, "ScriptsVersion") == .string(DeviceScripts.bundled.version))
        }
    }

    @Test("scripts edited on the device are put back")
    func editedScripts() async throws {
        try await withSession { ble, bus, _ in
            _ = try await pairAndWaitReady(ble, bus)
            let ui = ble.filesystem(monocle) + "/glassd_ui.py"
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: ui))
            try handle.seekToEnd()
            try handle.write(contentsOf: Data("\nEDITED = True\n".utf8))
            try handle.close()
            let states = try await deviceStates(bus, until: "ready") {
                _ = try await ble.bluez(["call", "org.bluez", "/org/bluezoo", "org.bluezoo.Test1", "DropLink", "s", address])
            }
            #expect(states.drop { $0 != "handshake" } == ["handshake", "checking", "uploading", "starting", "ready"])
            expectScriptsInstalled(ble)
        }
    }

    @Test("a tap asks a question over the data channel; with nothing said, glassd says so on the glasses in red")
    func tapRoundTrip() async throws {
        try await withSession { ble, bus, vm in
            _ = try await pairAndWaitReady(ble, bus)
            try await vm.waitForDisplay(containing: "Tap to speak")
            let states = try await deviceStates(bus, until: "ready", timeout: .seconds(60)) {
                try await vm.waitForDisplay(containing: "Listening") { try await vm.call("Tap") }
                try await vm.call("Tap")  // a second tap ends the question
            }
            #expect(states == ["busy", "ready"])
            try await vm.waitForDisplay(containing: "[red] I did not hear a question")
        }
    }

    @Test("both pads pressed on idle glasses: the scripts send gla: and the glasses show the glance; no question is recorded")
    func bothPadsGlance() async throws {
        try await withSession { ble, bus, vm in
            _ = try await pairAndWaitReady(ble, bus)
            try await vm.waitForDisplay(containing: "Tap to speak")
            // A finger lands on pad A first (its callback with 'A'), then on both ('BOTH').
            let shown = try await vm.waitForDisplay(containing: "unread") { try await vm.call("Press", [.string("BOTH"), .double(0.3)]) }
            #expect(shown.contains("No unread notifications"), "\(shown)")
            let sent = try String(contentsOfFile: ble.recordFile(monocle), encoding: .utf8)
            #expect(sent.contains("\"hex\": \"\(hex("gla:"))\""), "no gla: among what the Monocle sent")
            // The glance came after the press was let go: a question (ast:, or a photo's ist:)
            // would have been sent by then.
            for question in ["ast:", "ist:"] {
                #expect(!sent.contains("\"hex\": \"\(hex(question))"), "the press recorded a question (\(question))")
            }
            #expect(try await deviceProperty(bus, GlassdBus.DeviceProperty.state)?.string == "ready")
        }
    }

    private func hex(_ text: String) -> String { text.utf8.map { String(format: "%02x", $0) }.joined() }
}
