// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import Foundation
import GlassdAPI
import Monocle
import Testing

private let worldReady = BLEWorld.available || ProcessInfo.processInfo.environment["GLASSD_REQUIRE_BLE"] != nil
private let monocle = 2
private let address = BLEWorld.adapterAddress(monocle)
private let devicePath = GlassdBus.devicePath(address: address)

/// Updates end to end: glassd on a private bus, the fake BlueZ, a virtual Monocle (real
/// MicroPython) with its bootloader and FPGA flash; packages made by nrfutil, FPGA images
/// synthetic; glassctl as the user runs it.
@Suite("Updates on a virtual Monocle", .timeLimit(.minutes(10)), .serialized, .enabled(if: worldReady, "the Python BLE world is not set up"))
struct UpdateTests {
    static let oldFirmware = "v23.248.0754"
    static let oldFPGA = "v23.230.0808"

    /// The world with glassd paired to a ready virtual Monocle; firmware_dir is `<world>/firmware`.
    /// `prepare` runs before pairing, with the firmware directory.
    private func withReadyGlasses(
        config extra: String = "", chunksMayDrop: Bool = false, prepare: (BLEWorld, String) async throws -> Void = { _, _ in },
        _ body: (BLEWorld, BusConnection, VirtualMonocle, String) async throws -> Void
    ) async throws {
        try await BLEWorld.with { ble in
            try await ble.withUpdatableGlasses(
                monocle, config: extra, chunksMayDrop: chunksMayDrop, prepare: { try await prepare(ble, $0) }
            ) { bus, vm, directory in
                try await body(ble, bus, vm, directory)
            }
        }
    }

    /// A full-size FPGA image carrying `version` where the virtual Monocle reads it.
    static func fpgaImage(version: String, in world: World) async throws -> (path: String, sha256: String) {
        let path = world.directory + "/fpga-\(version).bin"
        try Data(FPGAUpdateIntegrationTests.image(version: version)).write(to: URL(fileURLWithPath: path))
        return (path, try await world.sha256(path))
    }

    private func deviceProperty(_ bus: BusConnection, _ name: String) async throws -> DBusValue? {
        try await glassesProperty(bus, devicePath, name)
    }

    @Test("glassctl update with a firmware package and an FPGA image: one bar through every phase, new versions read back, recorded")
    func fullUpdate() async throws {
        try await withReadyGlasses(chunksMayDrop: true) { ble, bus, vm, _ in
            // A link paced as a real one (15 ms events, 4 packets each way), so the transfer runs
            // at a meaningful speed. A MicroPython slowed by a loaded machine may still drop a
            // chunk from its scheduler queue: the window halves and the chunk is resent.
            _ = try await vm.call("SetLinkTiming", [.double(15), .uint32(4), .double(15)])
            let package = try await DFUPackages.make(size: 24_000, version: "v99.001.0001", in: ble.world.directory)
            let fpga = try await Self.fpgaImage(version: "v99.002.0002", in: ble.world)

            let run = try await ble.world.glassctl(["update", "--json", "--firmware", package.path, "--fpga", fpga.path])
            #expect(run.ok, "\(run.stderr)")
            let lines = jsonObjects(run.stdout)
            let statuses = lines.compactMap { $0["status"] as? String }
            for phase in ["checking", "entering-dfu", "flashing-firmware", "restarting", "erasing-fpga", "writing-fpga", "verifying", "done"] {
                #expect(statuses.contains(phase), "no \(phase) in \(statuses)")
            }
            let percentages = lines.compactMap { ($0["percentage"] as? NSNumber)?.intValue }
            #expect(percentages == percentages.sorted(), "the bar went back: \(percentages)")
            #expect(percentages.last == 100)
            #expect(lines.last?["success"] as? Bool == true)

            #expect(try await deviceProperty(bus, GlassdBus.DeviceProperty.firmwareVersion)?.string == "v99.001.0001")
            #expect(try await deviceProperty(bus, GlassdBus.DeviceProperty.fpgaVersion)?.string == "v99.002.0002")
            #expect(try await deviceProperty(bus, GlassdBus.DeviceProperty.state)?.string == "ready")
            // The job stays on the bus, and matches its documented interface.
            let job = try #require(lines.first?["job"] as? String)
            let live = try await ble.world.busctl([
                "call", GlassdBus.name, job, "org.freedesktop.DBus.Introspectable", "Introspect",
            ])
            let file = try String(contentsOfFile: Paths.root + "/dbus/org.glassd.Job1.xml", encoding: .utf8)
            let liveMembers = try interfaceMembers(unescapeBusctlString(live.stdout), GlassdBus.jobInterface)
            #expect(liveMembers.count == 5)
            #expect(try interfaceMembers(file, GlassdBus.jobInterface) == liveMembers)
            let stats = try await vm.stats()
            #expect(stats["dfu_boots"] == 1)
            #expect(stats["fpga_erases"] == 1)

            let history = try await ble.world.glassctl(["update", "--history", "--json"])
            #expect(history.ok, "\(history.stderr)")
            let rows = jsonObjects(history.stdout)
            #expect(rows.count == 1)
            #expect(rows.first?["success"] as? Bool == true)
            #expect((rows.first?["from"] as? String)?.contains(Self.oldFirmware) == true)
            #expect((rows.first?["to"] as? String)?.contains("v99.001.0001") == true)
            #expect((rows.first?["to"] as? String)?.contains("v99.002.0002") == true)
        }
    }

    @Test("an FPGA image the FPGA does not start (its registers read blank after the reset): the job fails saying what runs, never done with 'unknown'")
    func fpgaThatDoesNotStart() async throws {
        try await withReadyGlasses(chunksMayDrop: true) { ble, bus, vm, _ in
            // Full size, but no bitstream the virtual FPGA takes (it carries no version marker).
            let path = ble.world.directory + "/not-a-bitstream.bin"
            try Data((0..<FPGACommands.doneOffset).map { UInt8(truncatingIfNeeded: $0 &* 7) }).write(to: URL(fileURLWithPath: path))
            let signals = try await jobFinishedSignals(bus)
            let job = try await startUpdate(bus, [("fpga", .string(path))])
            let (success, message) = try await finished(signals, job: job)
            #expect(!success, "\(message)")
            #expect(message.contains("no FPGA version"), "\(message)")
            #expect(message.contains(Self.oldFirmware), "what runs is said: \(message)")
            #expect(!message.contains("unknown"), "\(message)")
            #expect(try await vm.stats()["resets"] == 1)
            let history = jsonObjects(try await ble.world.glassctl(["update", "--history", "--json"]).stdout)
            #expect(history.first?["success"] as? Bool == false, "\(history)")
        }
    }

    /// Writes manifest.toml pinning these files (copied into `directory`) and versions.
    static func writeManifest(
        _ directory: String, firmware: (path: String, sha256: String, version: String)?,
        fpga: (path: String, sha256: String, version: String)?
    ) throws {
        var text = ""
        for (name, entry) in [("firmware", firmware), ("fpga", fpga)] {
            guard let entry else { continue }
            let file = (entry.path as NSString).lastPathComponent
            if entry.path != directory + "/" + file {
                try? FileManager.default.removeItem(atPath: directory + "/" + file)
                try FileManager.default.copyItem(atPath: entry.path, toPath: directory + "/" + file)
            }
            text += "[\(name)]\nfile = \"\(file)\"\nversion = \"\(entry.version)\"\nsha256 = \"\(entry.sha256)\"\n"
        }
        try text.write(toFile: directory + "/manifest.toml", atomically: true, encoding: .utf8)
    }

    private func expectRefused(_ bus: BusConnection, _ options: [(String, DBusValue)], _ name: String, _ comment: Comment) async {
        do {
            let job = try await startUpdate(bus, options)
            Issue.record("accepted (\(job)): \(comment)")
        } catch let error as BusError {
            #expect(error.name == name, "\(comment): \(error.message)")
        } catch {
            Issue.record("\(comment): \(error)")
        }
    }

    @Test("pinned versions: outdated glasses show update-required; bad images are refused before the glasses are touched; current glasses are left alone")
    func pinnedImages() async throws {
        // The virtual Monocle's battery is at 87 %.
        try await withReadyGlasses(config: "min_battery = 90\n", prepare: { ble, directory in
            let fpga = try await Self.fpgaImage(version: "v99.002.0002", in: ble.world)
            try Self.writeManifest(directory, firmware: nil, fpga: (fpga.path, fpga.sha256, "v99.002.0002"))
        }) { ble, bus, vm, directory in
            try await waitForProperty(
                bus, destination: GlassdBus.name, path: devicePath, interface: GlassdBus.deviceInterface,
                GlassdBus.DeviceProperty.state, equals: .string("update-required"))
            let reason = try await deviceProperty(bus, GlassdBus.DeviceProperty.stateReason)?.string ?? ""
            #expect(reason.contains("FPGA \(Self.oldFPGA) → v99.002.0002"), "\(reason)")
            let before = try await vm.stats()
            await expectRefused(bus, [], GlassdErrorName.batteryLow, "a battery at 87 % below 90 %")

            // Refused, each before anything reaches the glasses.
            let good = try await DFUPackages.make(size: 16_000, version: "v99.001.0001", in: ble.world.directory)
            for damage in DFUPackages.Damage.allCases {
                let broken = try await DFUPackages.broken(damage, from: good)
                await expectRefused(bus, [("firmware", .string(broken.path))], GlassdErrorName.invalidImage, "\(damage)")
            }
            let fpga = try await Self.fpgaImage(version: "v99.002.0002", in: ble.world)
            try Self.writeManifest(directory, firmware: nil, fpga: (fpga.path, String(repeating: "0", count: 64), "v99.002.0002"))
            await expectRefused(bus, [], GlassdErrorName.invalidImage, "a wrong pinned checksum")
            let truncated = ble.world.directory + "/fpga-truncated.bin"
            try Data(FPGAUpdateIntegrationTests.image(version: "v99.002.0002").prefix(100_000)).write(to: URL(fileURLWithPath: truncated))
            try Self.writeManifest(directory, firmware: nil, fpga: (truncated, fpga.sha256, "v99.002.0002"))
            await expectRefused(bus, [], GlassdErrorName.invalidImage, "a truncated FPGA image")
            await expectRefused(bus, [("fpga", .string(directory + "/missing.bin"))], GlassdErrorName.invalidImage, "a missing file")
            await expectRefused(bus, [("colour", .string("red"))], GlassdErrorName.invalidArgs, "an unknown option")
            let after = try await vm.stats()
            for counter in ["serial_bytes_in", "data_messages_in", "dfu_requests", "fpga_erases"] {
                #expect(after[counter] == before[counter], "\(counter) moved: \(before[counter] ?? -1) → \(after[counter] ?? -1)")
            }

            // Pinned to what the glasses run: nothing to do, nothing sent, and recorded.
            let current = try await Self.fpgaImage(version: Self.oldFPGA, in: ble.world)
            try Self.writeManifest(directory, firmware: nil, fpga: (current.path, current.sha256, Self.oldFPGA))
            let run = try await ble.world.glassctl(["update", "--json"])
            #expect(run.ok, "\(run.stderr)")
            let last = jsonObjects(run.stdout).last
            #expect(last?["success"] as? Bool == true)
            #expect((last?["message"] as? String)?.hasPrefix("Already current") == true, "\(String(describing: last))")
            #expect(try await vm.stats()["fpga_erases"] == before["fpga_erases"])
            #expect(try await deviceProperty(bus, GlassdBus.DeviceProperty.state)?.string == "ready")
            let history = jsonObjects(try await ble.world.glassctl(["update", "--history", "--json"]).stdout)
            #expect(history.count == 1)
        }
    }

    @Test("Cancel stops an FPGA write and the glasses keep their image; in the firmware transfer it is refused, and Pair is busy")
    func cancel() async throws {
        try await withReadyGlasses(chunksMayDrop: true) { ble, bus, vm, _ in
            let changes = try await bus.subscribe(
                SignalMatch(sender: GlassdBus.name, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"),
                SignalMatch(sender: GlassdBus.name, interface: GlassdBus.jobInterface, member: GlassdBus.Job.finished))
            func job(_ path: String, until status: String) async throws -> (finished: Bool, message: String) {
                try await within(.seconds(120), failure: { "job \(path) did not reach \(status)" }) {
                    for await event in changes {
                        guard case .signal(let signal) = event, signal.path == path else { continue }
                        if signal.member == GlassdBus.Job.finished {
                            return (true, signal.arguments.dropFirst().first?.string ?? "")
                        }
                        if signal.arguments.dropFirst().first?.stringKeyed?[GlassdBus.Job.status]?.unwrapped.string == status {
                            return (false, "")
                        }
                    }
                    throw TestFailure("signals ended")
                }
            }
            func cancel(_ path: String) async throws {
                _ = try await bus.call(GlassdBus.name, path: path, interface: GlassdBus.jobInterface, member: GlassdBus.Job.cancel)
            }

            let fpga = try await Self.fpgaImage(version: "v99.002.0002", in: ble.world)
            let first = try await startUpdate(bus, [("fpga", .string(fpga.path))])
            #expect(try await job(first, until: "writing-fpga").finished == false)
            try await cancel(first)
            let ended = try await job(first, until: "never")
            #expect(ended.finished && ended.message.hasPrefix("Cancelled"), "\(ended)")
            try await waitForProperty(
                bus, destination: GlassdBus.name, path: devicePath, interface: GlassdBus.deviceInterface,
                GlassdBus.DeviceProperty.state, equals: .string("ready"))
            #expect(try await deviceProperty(bus, GlassdBus.DeviceProperty.fpgaVersion)?.string == Self.oldFPGA)
            #expect(try await vm.stats()["resets"] == 0)

            let package = try await DFUPackages.make(size: 60_000, version: "v99.001.0001", in: ble.world.directory)
            let second = try await startUpdate(bus, [("firmware", .string(package.path))])
            #expect(try await job(second, until: "flashing-firmware").finished == false)
            #expect(try await deviceProperty(bus, GlassdBus.DeviceProperty.state)?.string == "updating")
            do {
                try await cancel(second)
                Issue.record("Cancel was accepted during the firmware transfer")
            } catch let error as BusError {
                #expect(error.name == GlassdErrorName.notCancellable)
            }
            let pair = try await ble.world.glassctl(["pair", address])
            #expect(!pair.ok && pair.stderr.contains(GlassdErrorName.busy), "\(pair.stderr)")
            let done = try await job(second, until: "never")
            #expect(done.finished && done.message.hasPrefix("Updated"), "\(done)")
            #expect(try await deviceProperty(bus, GlassdBus.DeviceProperty.firmwareVersion)?.string == "v99.001.0001")
        }
    }

    @Test("with [update] auto, glasses that connect with an outdated FPGA image are updated by themselves")
    func automatic() async throws {
        try await withReadyGlasses(config: "auto = true\n", chunksMayDrop: true, prepare: { ble, directory in
            let fpga = try await Self.fpgaImage(version: "v99.002.0002", in: ble.world)
            try Self.writeManifest(directory, firmware: nil, fpga: (fpga.path, fpga.sha256, "v99.002.0002"))
        }) { ble, bus, _, _ in
            try await waitForProperty(
                bus, destination: GlassdBus.name, path: devicePath, interface: GlassdBus.deviceInterface,
                GlassdBus.DeviceProperty.fpgaVersion, equals: .string("v99.002.0002"), timeout: .seconds(120))
            try await waitForProperty(
                bus, destination: GlassdBus.name, path: devicePath, interface: GlassdBus.deviceInterface,
                GlassdBus.DeviceProperty.state, equals: .string("ready"), timeout: .seconds(60))
            let history = jsonObjects(try await ble.world.glassctl(["update", "--history", "--json"]).stdout)
            #expect(history.count == 1)
            #expect(history.first?["success"] as? Bool == true)
        }
    }

    @Test("with [update] auto, glasses found in their bootloader get the pinned firmware and come back by themselves")
    func automaticFromBootloader() async throws {
        // Pinned at the version they run: only the bootloader can set the update off.
        let pinned = Self.oldFirmware
        try await withReadyGlasses(config: "auto = true\n", prepare: { ble, directory in
            let package = try await DFUPackages.make(size: 40_000, version: pinned, in: ble.world.directory)
            try Self.writeManifest(directory, firmware: (package.path, try await ble.world.sha256(package.path), pinned), fpga: nil)
        }) { ble, bus, vm, _ in
            #expect(try await deviceProperty(bus, GlassdBus.DeviceProperty.state) == .string("ready"))
            let signals = try await jobFinishedSignals(bus)
            try await vm.call("EnterDFU")
            let (success, message) = try await finished(signals)
            #expect(success, "\(message)")
            try await waitForProperty(
                bus, destination: GlassdBus.name, path: devicePath, interface: GlassdBus.deviceInterface,
                GlassdBus.DeviceProperty.state, equals: .string("ready"), timeout: .seconds(60))
            let stats = try await vm.stats()
            #expect(stats["dfu_boots"] == 1, "\(stats)")
            let history = jsonObjects(try await ble.world.glassctl(["update", "--history", "--json"]).stdout)
            #expect(history.count == 1 && history.first?["success"] as? Bool == true, "\(history)")
        }
    }
}
