// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import Foundation
import GlassdAPI
import Testing

private let worldReady = BLEWorld.available || ProcessInfo.processInfo.environment["GLASSD_REQUIRE_BLE"] != nil
private let monocle = 2
private let address = BLEWorld.adapterAddress(monocle)
private let bootloader = BLEWorld.adapterAddress(monocle + 1)
private let devicePath = GlassdBus.devicePath(address: address)
/// The bootloader as glassd's adapter (hci0) sees it.
private let bootloaderObject = "/org/bluez/hci0/dev_" + bootloader.replacingOccurrences(of: ":", with: "_")

/// Updates whose bootloader is not there the moment glassd looks: still known to BlueZ from an
/// earlier update, slow to advertise, or refusing a connection attempt; and the glasses coming
/// back from a reset through failed attempts. Each ends in a verified update, or in a job that
/// fails in words with the glasses' state saying where they are.
@Suite("Updates that reach a stale, slow or refusing bootloader", .timeLimit(.minutes(10)), .serialized, .enabled(if: worldReady, "the Python BLE world is not set up"))
struct UpdateReachTests {
    private func finishedJob(_ bus: BusConnection, _ options: [(String, DBusValue)]) async throws -> (success: Bool, message: String) {
        let signals = try await jobFinishedSignals(bus)
        let job = try await startUpdate(bus, options)
        return try await finished(signals, job: job, timeout: .seconds(240))
    }

    private func firmware(_ bus: BusConnection) async throws -> String? {
        try await glassesProperty(bus, devicePath, GlassdBus.DeviceProperty.firmwareVersion)?.string
    }

    @Test("a firmware + FPGA update, then a firmware update while BlueZ still shows the first one's bootloader (another client discovering): both verified")
    func twoInARow() async throws {
        try await BLEWorld.with { ble in
            try await ble.withUpdatableGlasses(monocle, chunksMayDrop: true) { bus, vm, _ in
                // As on a desktop with its Bluetooth panel open: someone else keeps discovery on,
                // so BlueZ keeps a device's last RSSI after it stops advertising.
                try await ble.bluezTest("HoldRSSI", "b", "true")
                // BlueZ keeps the unbonded bootloader's object for TemporaryTimeout (30 s) after its
                // link: the world keeps it for as long as this takes, so a slow run (a loaded CI
                // machine) still tests the case instead of finding it gone.
                try await ble.bluezTest("HoldDevices", "b", "true")
                let panel = try await ble.world.connect()
                _ = try await panel.call("org.bluez", path: "/org/bluez/hci0", interface: "org.bluez.Adapter1", member: "StartDiscovery")
                let first = try await DFUPackages.make(size: 24_000, version: "v99.001.0001", in: ble.world.directory)
                let fpga = try await UpdateTests.fpgaImage(version: "v99.002.0002", in: ble.world)
                let one = try await finishedJob(bus, [("firmware", .string(first.path)), ("fpga", .string(fpga.path))])
                #expect(one.success, "\(one.message)")
                #expect(one.message.contains("v99.001.0001") && one.message.contains("v99.002.0002"), "\(one.message)")

                // BlueZ still has the bootloader's object, with the RSSI it had while it advertised.
                #expect(try await vm.call("Mode") == [.string("app")])
                let stale = try await ble.bluez(["get-property", "org.bluez", bootloaderObject, "org.bluez.Device1", "RSSI"])
                #expect(stale.ok, "the bootloader shows no RSSI: the case is not tested (\(stale.stderr))")

                let second = try await DFUPackages.make(size: 24_000, version: "v99.001.0002", in: ble.world.directory)
                let two = try await finishedJob(bus, [("firmware", .string(second.path))])
                #expect(two.success, "\(two.message)")
                #expect(try await firmware(bus) == "v99.001.0002")
                #expect(try await vm.stats()["dfu_boots"] == 2)
                await panel.close()
            }
        }
    }

    @Test("a bootloader that advertises only 3 s after the reset is waited for")
    func slowBootloader() async throws {
        try await BLEWorld.with { ble in
            try await ble.withUpdatableGlasses(monocle) { bus, vm, _ in
                try await vm.call("SetBootloaderDelay", [.double(3)])
                let package = try await DFUPackages.make(size: 24_000, version: "v99.001.0001", in: ble.world.directory)
                let job = try await finishedJob(bus, [("firmware", .string(package.path))])
                #expect(job.success, "\(job.message)")
                #expect(try await firmware(bus) == "v99.001.0001")
                #expect(try await vm.stats()["dfu_boots"] == 1)
            }
        }
    }

    @Test("a first Connect() that fails, then one that works: to the bootloader, back to the glasses, and after an FPGA image's reset")
    func failedConnects() async throws {
        try await BLEWorld.with { ble in
            try await ble.withUpdatableGlasses(monocle, chunksMayDrop: true) { bus, vm, _ in
                // The glasses' link is up: their next Connect() is the one after the update's reset.
                try await ble.bluezTest("FailConnects", "su", bootloader, "1")
                try await ble.bluezTest("FailConnects", "su", address, "1")
                let package = try await DFUPackages.make(size: 24_000, version: "v99.001.0001", in: ble.world.directory)
                let job = try await finishedJob(bus, [("firmware", .string(package.path))])
                #expect(job.success, "\(job.message)")
                #expect(try await firmware(bus) == "v99.001.0001")
                #expect(try await failuresLeft(ble, bootloader) == 0, "no Connect() to the bootloader failed")

                try await ble.bluezTest("FailConnects", "su", address, "2")
                let fpga = try await UpdateTests.fpgaImage(version: "v99.002.0002", in: ble.world)
                let image = try await finishedJob(bus, [("fpga", .string(fpga.path))])
                #expect(image.success, "\(image.message)")
                #expect(image.message.contains("v99.002.0002"), "\(image.message)")
                #expect(try await failuresLeft(ble, address) == 0, "no Connect() to the glasses failed")
                let stats = try await vm.stats()
                #expect(stats["dfu_boots"] == 1 && stats["fpga_erases"] == 1, "\(stats)")
            }
        }
    }

    @Test("a bootloader that takes no connection: the job fails after the connect window, in words; the state says where the glasses are; the next update brings them back")
    func unreachable() async throws {
        try await BLEWorld.with { ble in
            try await ble.withUpdatableGlasses(monocle, config: "bootloader_connect_seconds = 4\n") { bus, vm, _ in
                try await ble.bluezTest("FailConnects", "su", bootloader, "1000")
                let package = try await DFUPackages.make(size: 24_000, version: "v99.001.0001", in: ble.world.directory)
                let failed = try await finishedJob(bus, [("firmware", .string(package.path))])
                #expect(!failed.success)
                #expect(
                    failed.message.hasPrefix("Could not reach the glasses' bootloader (le-connection-abort-by-local)"),
                    "\(failed.message)")
                #expect(!failed.message.contains("org.bluez") && !failed.message.contains("Org.bluez"), "\(failed.message)")
                #expect(failed.message.contains("glassctl update"), "\(failed.message)")
                #expect(try await vm.call("Mode") == [.string("dfu")])
                try await waitForProperty(
                    bus, destination: GlassdBus.name, path: devicePath, interface: GlassdBus.deviceInterface,
                    GlassdBus.DeviceProperty.stateReason, equals: .string(inBootloaderReason))

                #expect(try await failuresLeft(ble, bootloader) > 0)
                let resumed = try await finishedJob(bus, [])
                #expect(resumed.success, "\(resumed.message)")
                #expect(try await firmware(bus) == "v99.001.0001")
                #expect(try await vm.stats()["dfu_boots"] == 1)
            }
        }
    }

    /// Ends Test1.FailConnects for `address`: how many failures had not been used.
    private func failuresLeft(_ ble: BLEWorld, _ address: String) async throws -> Int {
        let reply = try await ble.bluez([
            "--json=short", "call", "org.bluez", "/org/bluezoo", "org.bluezoo.Test1", "FailConnects", "su", address, "0",
        ])
        guard reply.ok, let object = try? JSONSerialization.jsonObject(with: Data(reply.stdout.utf8)) as? [String: Any],
            let left = (object["data"] as? [Any])?.first as? Int
        else { throw TestFailure("FailConnects: \(reply.stdout) \(reply.stderr)") }
        return left
    }
}

/// Device1.StateReason while only the glasses' bootloader is in sight.
private let inBootloaderReason = "The glasses are in their bootloader: glassctl update --firmware FILE brings them back."
