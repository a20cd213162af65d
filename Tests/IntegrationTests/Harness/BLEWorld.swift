// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import Foundation
import GlassdAPI
import Testing

/// A World with a fake BlueZ on its bus: bzworld (bluezoo 1.0.2 with the project's fixes) with
/// adapter hci0 (00:00:00:00:00:01) for glassd and one adapter per virtual Monocle.
struct BLEWorld: Sendable {
    let world: World
    let venvPython: String
    /// Adapter addresses: hci0 is glassd's, hci1... are the Monocles'.
    static func adapterAddress(_ index: Int) -> String { String(format: "00:00:00:00:00:%02X", index + 1) }

    static var venv: String {
        ProcessInfo.processInfo.environment["GLASSD_TEST_VENV"] ?? Paths.root + "/.venv"
    }

    /// Whether the Python test world is installed (Scripts/test does it).
    static var available: Bool { FileManager.default.isExecutableFile(atPath: venv + "/bin/python") }

    static func with<R: Sendable>(adapters: Int = 5, _ body: (BLEWorld) async throws -> R) async throws -> R {
        try await World.with { world in
            let ble = BLEWorld(world: world, venvPython: venv + "/bin/python")
            return try await ble.withBlueZ(adapters: adapters) { try await body(ble) }
        }
    }

    /// Runs bzworld until `body` ends (call it again to "restart bluetoothd").
    func withBlueZ<R: Sendable>(adapters: Int = 5, _ body: () async throws -> R) async throws -> R {
        var arguments = [Paths.root + "/Tests/World/bzworld.py", "-q", "--auto-enable", "--scan-interval", "1"]
        for i in 0..<adapters { arguments += ["-a", Self.adapterAddress(i)] }
        return try await withBackground(
            venvPython, arguments, environment: ["DBUS_SYSTEM_BUS_ADDRESS": world.busAddress],
            log: world.directory + "/bluez.log", firstLine: true
        ) { _, line in
            guard line == "READY" else { throw TestFailure("bzworld did not start: \(line)") }
            return try await body()
        }
    }

    /// Runs a virtual Monocle on adapter `hci<index>` until `body` ends.
    /// With `waitReady: false` it may start before BlueZ: it registers once BlueZ appears.
    /// Its filesystem is `filesystem(index)`, kept across restarts of the virtual Monocle; with
    /// `echo` it only echoes writes (no MicroPython), for transport tests.
    func withMonocle<R: Sendable>(
        _ index: Int, txPower: Int, waitReady: Bool = true, echo: Bool = false, battery: Int = 100, name: String? = nil,
        _ body: (Background) async throws -> R
    ) async throws -> R {
        try FileManager.default.createDirectory(atPath: filesystem(index), withIntermediateDirectories: true)
        return try await withBackground(
            venvPython,
            [
                Paths.root + "/Tests/World/virtual_monocle.py", "--adapter", "hci\(index)", "--tx-power", "\(txPower)",
                "--record", recordFile(index), "--fs", filesystem(index), "--battery", "\(battery)",
            ] + (echo ? ["--echo"] : []) + (name.map { ["--name", $0] } ?? []),
            environment: ["DBUS_SYSTEM_BUS_ADDRESS": world.busAddress], log: world.directory + "/monocle\(index).log",
            firstLine: waitReady
        ) { process, line in
            guard !waitReady || line == "READY" else { throw TestFailure("virtual Monocle hci\(index) did not start: \(line)") }
            let result = try await body(process)
            if !echo { try await expectCleanREPL(index) }
            return result
        }
    }

    /// Over the whole life of a virtual Monocle, glassd never sent 0x1C (safe mode) and no REPL
    /// byte was lost to the device's 1024-byte receive ring.
    private func expectCleanREPL(_ index: Int) async throws {
        let reply = try await world.busctl([
            "--json=short", "call", "org.glassd.test.VirtualMonocle.hci\(index)", "/org/glassd/vmonocle/hci\(index)",
            "org.glassd.test.VirtualMonocle1", "Stats",
        ])
        // The Monocle may have been stopped on purpose by the test ("glasses gone").
        guard reply.ok else { return }
        guard let object = try? JSONSerialization.jsonObject(with: Data(reply.stdout.utf8)) as? [String: Any],
            let stats = (object["data"] as? [Any])?.first as? [String: [String: Any]]
        else {
            Issue.record("cannot read the Stats of hci\(index): \(reply.stdout)")
            return
        }
        #expect(stats["safe_mode"]?["data"] as? Int == 0, "0x1C reached the REPL of hci\(index)")
        #expect(stats["ring_dropped"]?["data"] as? Int == 0, "REPL bytes were lost to the ring of hci\(index)")
    }

    func recordFile(_ index: Int) -> String { world.directory + "/monocle\(index).jsonl" }

    /// The device filesystem of virtual Monocle `index`.
    func filesystem(_ index: Int) -> String { world.directory + "/monocle\(index)-fs" }

    /// A glassd.conf for link tests: adapter hci0, short scans, a short backoff cap.
    func writeConfig(reconnectMax: Int = 5, scanTimeout: Int = 3) throws -> String {
        let path = try world.writeConfig()
        let text = try String(contentsOfFile: path, encoding: .utf8)
        try (text + "[bluetooth]\nadapter = \"hci0\"\nscan_timeout = \(scanTimeout)\nreconnect_max_seconds = \(reconnectMax)\n")
            .write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// busctl on the shared bus, where the fake BlueZ lives too.
    func bluez(_ arguments: [String]) async throws -> CommandResult {
        try await world.busctl(arguments)
    }
}

/// Waits for a property to take a value, watching PropertiesChanged (no polling): subscribes
/// first, then reads the current value, then follows the signals.
func waitForProperty(
    _ bus: BusConnection, destination: String, path: String, interface: String, _ name: String,
    equals expected: DBusValue, timeout: Duration = .seconds(30)
) async throws {
    let changes = try await bus.signals(
        SignalMatch(path: path, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"))
    let current = try? await bus.call(
        destination, path: path, interface: "org.freedesktop.DBus.Properties", member: "Get",
        [.string(interface), .string(name)])
    if current?.first == .variant(expected) { return }
    try await within(timeout, failure: { "\(path) \(name) did not become \(expected) within \(timeout)" }) {
        for await signal in changes where signal.arguments.first?.string == interface {
            if signal.arguments[1].stringKeyed?[name] == .variant(expected) { return }
        }
        throw TestFailure("signals ended before \(name) became \(expected)")
    }
}
