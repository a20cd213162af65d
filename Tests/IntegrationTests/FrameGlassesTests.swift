// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import Foundation
import Frame
import GlassdAPI
import Testing

private let worldReady = BLEWorld.available || ProcessInfo.processInfo.environment["GLASSD_REQUIRE_BLE"] != nil
private let frame = 3

extension BLEWorld {
    /// glassd and a virtual Frame (Lua in a real Lua 5.4, glassd's app uploaded by glassd) on
    /// `hci<index>`, until `body` ends; glassd's log and the Frame's are shown on a failure.
    func withFrameSession(_ index: Int, _ body: (BusConnection, VirtualFrame) async throws -> Void) async throws {
        try await withFrame(index, txPower: -45) { _ in
            try await world.withGlassd(config: try writeConfig()) { _ in
                let bus = try await world.connect()
                let vf = VirtualFrame(bus: bus, index: index)
                do {
                    try await body(bus, vf)
                } catch {
                    let log = world.log().suffix(6000)
                    let device = (try? String(contentsOfFile: world.directory + "/frame\(index).log", encoding: .utf8)) ?? ""
                    await bus.close()
                    throw TestFailure("\(error)\n--- glassd:\n\(log)\n--- virtual Frame:\n\(device.suffix(3000))")
                }
                let stats = try await vf.stats()
                #expect(stats["errors", default: 0] == 0, "the app raised Lua errors: \(stats)")
                await bus.close()
            }
        }
    }
}

/// Brilliant Frame end to end: glassd, the fake BlueZ, a virtual Frame running glassd's own Lua
/// app in a real Lua interpreter, and the fake OpenAI-compatible server.
@Suite("Questions on a virtual Frame", .timeLimit(.minutes(10)), .serialized, .enabled(if: worldReady, "the Python BLE world is not set up"))
struct FrameGlassesTests {
    private func device(_ world: World) async throws -> [String: Any] {
        let listed = try await world.glassctl(["devices", "--json"])
        let devices = try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]] ?? []
        return try #require(devices.first { $0["address"] as? String == BLEWorld.adapterAddress(frame) })
    }

    private func appModified(_ ble: BLEWorld) throws -> Date? {
        try FileManager.default.attributesOfItem(atPath: ble.frameFlash(frame) + "/" + FrameApp.appFile)[.modificationDate] as? Date
    }

    @Test("pair bonds the Frame and uploads glassd's app once: ready, Kind frame, the app's version; Display shows text; after a power cycle it is ready again without an upload")
    func pairUploadReconnect() async throws {
        try await BLEWorld.with { ble in
            try await ble.withFrameSession(frame) { bus, vf in
                try await ble.pairReady(frame, bus)
                #expect(try await vf.bonded())
                let files = try await vf.files()
                for name in [FrameApp.appFile, FrameApp.mainFile, FrameApp.stampFile] { #expect(files.contains(name), "\(files)") }
                let shown = try await device(ble.world)
                #expect(shown["kind"] as? String == "frame")
                #expect(shown["scripts_version"] as? String == FrameApp.bundled.version)
                #expect((shown["firmware_version"] as? String)?.isEmpty == false, "\(shown)")
                #expect(shown["state"] as? String == "ready")

                let display = try await ble.world.busctl([
                    "call", GlassdBus.name, GlassdBus.devicePath(address: BLEWorld.adapterAddress(frame)), GlassdBus.deviceInterface,
                    GlassdBus.DeviceMethod.display, "s", "Hello from glassd",
                ])
                #expect(display.ok, "\(display.stderr)")
                try await vf.waitForDisplay(containing: "Hello from glassd")

                let uploaded = try appModified(ble)
                let path = GlassdBus.devicePath(address: BLEWorld.adapterAddress(frame))
                let changes = try await bus.signals(
                    SignalMatch(path: path, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"))
                try await vf.call("PowerOff")
                try await vf.call("PowerOn")
                try await within(.seconds(60), failure: { "the Frame did not become ready again" }) {
                    var left = false
                    for await signal in changes {
                        let state = signal.arguments.dropFirst().first?.stringKeyed?[GlassdBus.DeviceProperty.state]?.string
                        if state != nil && state != "ready" { left = true }
                        if left && state == "ready" { return }
                    }
                }
                #expect(try appModified(ble) == uploaded, "the app was uploaded again")
                #expect(try await device(ble.world)["reconnect_count"] as? Int == 1)
            }
        }
    }
}
