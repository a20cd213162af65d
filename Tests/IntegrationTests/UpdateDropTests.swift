// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import Foundation
import GlassdAPI
import Monocle
import Testing

private let worldReady = BLEWorld.available || ProcessInfo.processInfo.environment["GLASSD_REQUIRE_BLE"] != nil
private let monocle = 2
private let address = BLEWorld.adapterAddress(monocle)
private let bootloader = BLEWorld.adapterAddress(monocle + 1)
private let devicePath = GlassdBus.devicePath(address: address)

/// Updates that lose the link on the way, or glassd itself: each ends in a resumed, verified update.
@Suite("Updates through link drops and restarts", .timeLimit(.minutes(10)), .serialized, .enabled(if: worldReady, "the Python BLE world is not set up"))
struct UpdateDropTests {
    /// Where to drop the link: once the job shows `status` at `percent` or more.
    struct Point: Sendable, CustomStringConvertible {
        var status: String
        var percent: UInt32 = 0
        /// The bootloader's link (address + 1), else the glasses'.
        var inBootloader = false
        var description: String { "\(status)≥\(percent)%" }
    }

    /// Follows job `path` and drops the link at each point in turn (retrying, on each later
    /// signal, until the link to drop is up); returns the points dropped and how the job ended.
    private func run(
        _ ble: BLEWorld, _ bus: BusConnection, job start: () async throws -> String, drops points: [Point],
        at reached: @escaping @Sendable (Point) async throws -> Void = { _ in }
    ) async throws -> (dropped: [String], success: Bool, message: String) {
        let signals = try await bus.subscribe(
            SignalMatch(sender: GlassdBus.name, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"),
            SignalMatch(sender: GlassdBus.name, interface: GlassdBus.jobInterface, member: GlassdBus.Job.finished))
        let job = try await start()
        return try await within(.seconds(400), failure: { "the job did not finish" }) {
            var status = ""
            var percent: UInt32 = 0
            var next = 0
            var dropped: [String] = []
            var armed = false
            for await event in signals {
                guard case .signal(let signal) = event else { continue }
                if signal.path == job, signal.member == GlassdBus.Job.finished {
                    guard case .bool(let success)? = signal.arguments.first else { continue }
                    return (dropped, success, signal.arguments.dropFirst().first?.string ?? "")
                }
                if signal.path == job, let changed = signal.arguments.dropFirst().first?.stringKeyed {
                    if let s = changed[GlassdBus.Job.status]?.unwrapped.string { status = s }
                    if case .uint32(let p)? = changed[GlassdBus.Job.percentage]?.unwrapped { percent = p }
                }
                guard next < points.count else { continue }
                let point = points[next]
                if !armed, status == point.status, percent >= point.percent {
                    armed = true
                    try await reached(point)
                }
                guard armed else { continue }
                let target = point.inBootloader ? bootloader : address
                let drop = try await ble.bluez(["call", "org.bluez", "/org/bluezoo", "org.bluezoo.Test1", "DropLink", "s", target])
                if drop.ok {
                    dropped.append("\(point) (at \(status) \(percent)%)")
                    next += 1
                    armed = false
                }
            }
            throw TestFailure("signals ended; dropped \(dropped)")
        }
    }

    private func deviceProperty(_ bus: BusConnection, _ name: String) async throws -> String? {
        try await glassesProperty(bus, devicePath, name)?.string
    }

    @Test("ten link drops across entering the bootloader, the firmware transfer, the restart, the scripts and the FPGA image: the update resumes and is verified")
    func drops() async throws {
        try await BLEWorld.with { ble in
            try await ble.withSession(monocle, chunksMayDrop: true) { bus, vm in
                try await ble.pairReady(monocle, bus)
                let package = try await DFUPackages.make(size: 120_000, version: "v99.001.0001", in: ble.world.directory)
                // The scripts go from the device while it is in its bootloader: the new firmware's
                // first link uploads them (uploading-scripts), and that link drops too.
                let scripts = ble.filesystem(monocle) + "/" + DeviceScripts.mainFile
                let firmware = try await run(
                    ble, bus, job: { try await startUpdate(bus, [("firmware", .string(package.path))]) },
                    drops: [
                        Point(status: "entering-dfu"),
                        Point(status: "flashing-firmware", percent: 18, inBootloader: true),
                        Point(status: "flashing-firmware", percent: 48, inBootloader: true),
                        Point(status: "flashing-firmware", percent: 79, inBootloader: true),
                        Point(status: "restarting"),
                        Point(status: "uploading-scripts"),
                    ]
                ) { point in
                    if point.percent == 79 { try FileManager.default.removeItem(atPath: scripts) }
                }
                #expect(firmware.success, "\(firmware.message)")
                #expect(firmware.dropped.count == 6, "\(firmware.dropped)")
                #expect(try await deviceProperty(bus, GlassdBus.DeviceProperty.firmwareVersion) == "v99.001.0001")
                let stats = try await vm.stats()
                #expect(stats["dfu_boots"] == 1)
                // Resumed, not started over: well under four times the image crossed the link.
                #expect((stats["dfu_bytes_received"] ?? 0) < 4 * 120_000, "\(stats)")

                let image = ble.world.directory + "/fpga.bin"
                try Data(FPGAUpdateIntegrationTests.image(version: "v99.002.0002")).write(to: URL(fileURLWithPath: image))
                let fpga = try await run(
                    ble, bus, job: { try await startUpdate(bus, [("fpga", .string(image))]) },
                    drops: [
                        Point(status: "erasing-fpga"), Point(status: "writing-fpga", percent: 29),
                        Point(status: "writing-fpga", percent: 71), Point(status: "verifying"),
                    ])
                #expect(fpga.success, "\(fpga.message)")
                #expect(fpga.dropped.count == 4, "\(fpga.dropped)")
                #expect(try await deviceProperty(bus, GlassdBus.DeviceProperty.fpgaVersion) == "v99.002.0002")
                // A drop that landed just as the job ended is reconnected from.
                try await waitForProperty(
                    bus, destination: GlassdBus.name, path: devicePath, interface: GlassdBus.deviceInterface,
                    GlassdBus.DeviceProperty.state, equals: .string("ready"), timeout: .seconds(60))
            }
        }
    }

    @Test("glassd killed in the middle of the firmware transfer: the next glassd finds the bootloader and resumes")
    func restartMidTransfer() async throws {
        try await BLEWorld.with { ble in
            try await ble.withMonocle(monocle, txPower: -45, battery: 87) { _ in
                let config = try ble.writeConfig()
                let size = 120_000
                let package = try await DFUPackages.make(size: size, version: "v99.001.0001", in: ble.world.directory)
                try await ble.world.withGlassd(config: config) { glassd in
                    let bus = try await ble.world.connect()
                    try await ble.pairReady(monocle, bus)
                    let changes = try await bus.signals(
                        SignalMatch(sender: GlassdBus.name, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"))
                    let job = try await startUpdate(bus, [("firmware", .string(package.path))])
                    try await within(.seconds(120), failure: { "the transfer did not get halfway" }) {
                        for await signal in changes where signal.path == job {
                            let changed = signal.arguments.dropFirst().first?.stringKeyed
                            if case .uint32(let p)? = changed?[GlassdBus.Job.percentage]?.unwrapped, p >= 40 { return }
                        }
                        throw TestFailure("signals ended")
                    }
                    glassd.kill9()
                    await bus.close()
                }
                let vm = VirtualMonocle(bus: try await ble.world.connect(), index: monocle)
                #expect(try await vm.call("Mode") == [.string("dfu")])
                try await ble.world.withGlassd(config: config) { _ in
                    let bus = try await ble.world.connect()
                    try await waitForProperty(
                        bus, destination: GlassdBus.name, path: devicePath, interface: GlassdBus.deviceInterface,
                        GlassdBus.DeviceProperty.firmwareVersion, equals: .string("v99.001.0001"), timeout: .seconds(120))
                    // The job has ended (recorded) once the device is no longer updating.
                    try await waitForProperty(
                        bus, destination: GlassdBus.name, path: devicePath, interface: GlassdBus.deviceInterface,
                        GlassdBus.DeviceProperty.state, equals: .string("ready"), timeout: .seconds(60))
                    let history = try await ble.world.glassctl(["update", "--history", "--json"])
                    let rows = jsonObjects(history.stdout)
                    #expect(rows.count == 2, "\(history.stdout)")
                    #expect(rows.first?["success"] as? Bool == true)
                    #expect(rows.last?["success"] as? Bool == false)
                    #expect(rows.last?["error"] as? String == "glassd stopped during the update")
                    await bus.close()
                }
                let stats = try await vm.stats()
                #expect(stats["dfu_boots"] == 1)
                // Resumed from what the bootloader held: less than twice the image crossed.
                #expect((stats["dfu_bytes_received"] ?? 0) < 2 * size, "\(stats)")
                await vm.bus.close()
            }
        }
    }

    @Test("glasses left in their bootloader by something else: StateReason says so, and Update with a firmware package brings them back")
    func strandedInBootloader() async throws {
        try await BLEWorld.with { ble in
            try await ble.withMonocle(monocle, txPower: -45, battery: 87) { _ in
                let package = try await DFUPackages.make(size: 60_000, version: "v99.002.0001", in: ble.world.directory)
                try await ble.world.withGlassd(config: try ble.writeConfig()) { _ in
                    let bus = try await ble.world.connect()
                    try await ble.pairReady(monocle, bus)
                    // As another tool would leave them: in the bootloader, with no package kept by glassd.
                    try await VirtualMonocle(bus: bus, index: monocle).call("EnterDFU")
                    try await waitForProperty(
                        bus, destination: GlassdBus.name, path: devicePath, interface: GlassdBus.deviceInterface,
                        GlassdBus.DeviceProperty.stateReason,
                        equals: .string("The glasses are in their bootloader: glassctl update --firmware FILE brings them back."),
                        timeout: .seconds(60))
                    let signals = try await jobFinishedSignals(bus)
                    let job = try await startUpdate(bus, [("firmware", .string(package.path))])
                    let (success, message) = try await finished(signals, job: job)
                    #expect(success, "\(message)")
                    try await waitForProperty(
                        bus, destination: GlassdBus.name, path: devicePath, interface: GlassdBus.deviceInterface,
                        GlassdBus.DeviceProperty.firmwareVersion, equals: .string("v99.002.0001"), timeout: .seconds(60))
                    try await waitForProperty(
                        bus, destination: GlassdBus.name, path: devicePath, interface: GlassdBus.deviceInterface,
                        GlassdBus.DeviceProperty.state, equals: .string("ready"), timeout: .seconds(60))
                    let stats = try await VirtualMonocle(bus: bus, index: monocle).stats()
                    #expect(stats["dfu_boots"] == 1, "\(stats)")
                    await bus.close()
                }
            }
        }
    }
}
