// SPDX-License-Identifier: GPL-2.0-or-later
import Bluetooth
import DBusKit
import Firmware
import Foundation
import LinkKit
import Monocle
import Synchronization
import Testing

/// The measurements of Scripts/bench-update (numbers, not a test: it runs only with
/// GLASSD_BENCH_UPDATE=1). One virtual Monocle under one link timing model (GLASSD_BENCH_LINK,
/// `INTERVAL_MS,PACKETS,LATENCY_MS`, see Tests/World/linktiming.py) takes an FPGA image the way Noa
/// does it, then glassd's windowed way (its adaptive window, then one fixed at 3: what the scheduler
/// always holds),
/// then glassd's REPL way, then a firmware image through its bootloader; and a virtual Halo's
/// MCUboot image over SMP (glassctl update FILE) under the same model. Each result is one line
/// `bench-update: {json}` on stdout for the script to read.
@Suite(
    "Update benchmark", .serialized, .timeLimit(.minutes(40)),
    .enabled(if: ProcessInfo.processInfo.environment["GLASSD_BENCH_UPDATE"] == "1"))
struct UpdateBenchmark {
    private static let monocle = 2
    private static let environment = ProcessInfo.processInfo.environment
    private static let link = environment["GLASSD_BENCH_LINK"] ?? "15,4,15"
    private static let fpgaBytes = Int(environment["GLASSD_BENCH_FPGA_BYTES"] ?? "") ?? FPGACommands.doneOffset
    private static let dfuBytes = Int(environment["GLASSD_BENCH_DFU_BYTES"] ?? "") ?? 100_000
    private static let halo = 3
    private static let mcubootBytes = Int(environment["GLASSD_BENCH_MCUBOOT_BYTES"] ?? "") ?? 200_000

    @Test("FPGA image: Noa's REPL method, glassd's windowed and REPL methods; firmware through the bootloader")
    func transfers() async throws {
        let parts = Self.link.split(separator: ",")
        guard parts.count == 3, let interval = Double(parts[0]), let packets = UInt32(parts[1]), let latency = Double(parts[2])
        else { throw TestFailure("GLASSD_BENCH_LINK is INTERVAL_MS,PACKETS,LATENCY_MS, not \(Self.link)") }
        try await BLEWorld.with { ble in
            try await ble.withMonocle(Self.monocle, txPower: -45) { _ in
                let vm = VirtualMonocle(bus: try await ble.world.connect(), index: Self.monocle)
                try await vm.call("SetLinkTiming", [.double(interval), .uint32(packets), .double(latency)])
                try await ble.withLinkLibrary(pairedWith: Self.monocle) { supervisor, events, first in
                    var link = first
                    let serial = try #require(link.channel(MonocleChannel.serial))
                    let limit = try await Self.limit(vm, payload: serial.maxPacketSize)
                    Self.emit([
                        "what": "link", "interval_ms": interval, "packets": Int(packets), "latency_ms": latency,
                        "payload": serial.maxPacketSize, "limit_bytes_per_s": limit,
                    ])

                    let noa = Self.image(version: "v99.000.0011")
                    link = try await Self.fpga("noa", image: noa, link: link, events: events, ble: ble, vm: vm) {
                        repl, serial, _, _ in (try await Self.noaUpdate(image: noa, repl: repl, maxLen: serial.maxPacketSize), 0)
                    }
                    let windowed = Self.image(version: "v99.000.0012")
                    link = try await Self.fpga("windowed", image: windowed, link: link, events: events, ble: ble, vm: vm) {
                        repl, _, data, progress in
                        Self.counts(
                            try await FPGAUpdate.runWindowed(
                                image: windowed, repl: repl, data: data, clock: ContinuousClock(), progress: progress))
                    }
                    // Not glassd's setting: the window fixed at 3, which MicroPython's scheduler queue
                    // holds whatever the link delivers at once (glassd starts at 8 and halves on a loss).
                    var fixed = FPGAStreamSettings()
                    fixed.window = 3
                    fixed.minimumWindow = 3
                    let narrow = Self.image(version: "v99.000.0013")
                    link = try await Self.fpga("windowed_3", image: narrow, link: link, events: events, ble: ble, vm: vm) {
                        [fixed] repl, _, data, progress in
                        Self.counts(
                            try await FPGAUpdate.runWindowed(
                                image: narrow, repl: repl, data: data, clock: ContinuousClock(), stream: fixed, progress: progress))
                    }
                    let replImage = Self.image(version: "v99.000.0014")
                    link = try await Self.fpga("repl", image: replImage, link: link, events: events, ble: ble, vm: vm) {
                        repl, _, _, progress in Self.counts(try await FPGAUpdate.run(image: replImage, repl: repl, progress: progress))
                    }
                    try await Self.firmware(supervisor: supervisor, vm: vm, events: events, directory: ble.world.directory)
                }
                await vm.bus.close()
            }
        }
    }

    @Test("Halo firmware over MCUmgr: glassctl update FILE under the same link model on the SMP characteristic")
    func haloFirmware() async throws {
        let parts = Self.link.split(separator: ",")
        guard parts.count == 3, let interval = Double(parts[0]), let packets = UInt32(parts[1]), let latency = Double(parts[2])
        else { throw TestFailure("GLASSD_BENCH_LINK is INTERVAL_MS,PACKETS,LATENCY_MS, not \(Self.link)") }
        try await BLEWorld.with { ble in
            try await ble.withFrameSession(Self.halo, halo: true) { bus, vf in
                try await ble.pairReady(Self.halo, bus)
                try await vf.call("SetLinkTiming", [.double(interval), .uint32(packets), .double(latency)])
                let made = try await runCommand(
                    BLEWorld.venv + "/bin/python",
                    [
                        Paths.root + "/Tests/World/make_mcuboot_image.py", "--out", ble.world.directory + "/zephyr.signed.bin",
                        "--version", "0.8.8", "--size", "\(Self.mcubootBytes)",
                    ])
                guard made.ok else { throw TestFailure("make_mcuboot_image.py failed: \(made.stderr)") }
                let run = try await ble.world.glassctl(["update", "--json", ble.world.directory + "/zephyr.signed.bin"])
                guard run.ok else { throw TestFailure("the Halo update failed: \(run.stdout.suffix(600)) \(run.stderr)") }
                // The updater's own measurement: from the first upload request to the last answer.
                guard let line = ble.world.log().split(separator: "\n").first(where: { $0.contains("firmware image uploaded") }) else {
                    throw TestFailure("glassd logged no upload")
                }
                func field(_ name: String) -> String? {
                    line.split(separator: " ").first { $0.hasPrefix(name + "=") }.map { String($0.dropFirst(name.count + 1)) }
                }
                guard let bytes = field("bytes").flatMap(Int.init), let seconds = field("seconds").flatMap(Double.init),
                    let frame = field("frame_limit").flatMap(Int.init)
                else { throw TestFailure("the upload's log line lacks its numbers: \(line)") }
                guard case .double(let limit) = try await vf.call("LinkLimit", [.uint32(512)]).first?.unwrapped else {
                    throw TestFailure("LinkLimit gave no number")
                }
                Self.emit([
                    "what": "mcumgr", "bytes": bytes, "seconds": seconds, "frame_limit": frame, "limit_bytes_per_s": limit,
                    "interval_ms": interval, "packets": Int(packets),
                ])
            }
        }
    }

    /// Noa's FPGA update (monocle-protocol.md §6): the image in base64, cut into chunks of
    /// `((maxLen - 45) / 3 / 4) * 4 * 3` characters (204 = 153 bytes at maxLen 253), one raw-REPL
    /// command each, each waiting for its acknowledgement; no readback; then `done` and the reset.
    static func noaUpdate(image: [UInt8], repl: RawRepl<ContinuousClock>, maxLen: Int) async throws -> Int {
        let before = await repl.roundTrips
        let chunk = (maxLen - 45) / 3 / 4 * 4 * 3
        let text = Array(Data(image).base64EncodedString().utf8)
        _ = try await repl.execute(
            "import ubinascii,update,device,bluetooth,fpga;fpga.run(False);update.Fpga.erase()", timeout: .seconds(30))
        for start in stride(from: 0, to: text.count, by: chunk) {
            let piece = String(decoding: text[start..<min(start + chunk, text.count)], as: UTF8.self)
            _ = try await repl.execute("update.Fpga.write(ubinascii.a2b_base64(b'\(piece)'))")
        }
        try await repl.start("update.Fpga.write(b'done');device.reset()")
        return await repl.roundTrips - before
    }

    /// A synthetic FPGA image of GLASSD_BENCH_FPGA_BYTES carrying `version` where the virtual
    /// Monocle looks for it.
    static func image(version: String) -> [UInt8] {
        var bytes = Array("GLASSD-FPGA-VERSION:\(version)".utf8)
        while bytes.count < fpgaBytes { bytes.append(UInt8(truncatingIfNeeded: bytes.count &* 131 &+ bytes.count >> 9)) }
        return bytes
    }

    static func counts(_ report: FPGAUpdateReport) -> (roundTrips: Int, resends: Int) {
        (report.roundTrips, report.resends)
    }

    /// One FPGA update by `method` on `link` (given the REPL, the serial and the data channel, and a
    /// progress callback that times the readback; giving its REPL round trips and resends), timed;
    /// the glasses reset and come back, with the image's version where `done` landed in its place
    /// (Noa's method marks a shorter image done right after it). Returns the new link.
    static func fpga(
        _ method: String, image: [UInt8], link: any GlassesLink, events: AsyncStream<LinkEvent>, ble: BLEWorld,
        vm: VirtualMonocle,
        _ update: (RawRepl<ContinuousClock>, any ByteChannel, any ByteChannel, @Sendable (FPGAProgress) -> Void)
            async throws -> (roundTrips: Int, resends: Int)
    ) async throws -> any GlassesLink {
        let serial = try #require(link.channel(MonocleChannel.serial))
        let repl = RawRepl(channel: serial, clock: ContinuousClock())
        try await repl.enter()
        let acksBefore = acknowledgements(ble)
        let droppedBefore = try await vm.stats()["callbacks_dropped"] ?? 0
        let clock = ContinuousClock()
        let verifying = Mutex<ContinuousClock.Instant?>(nil)
        let start = clock.now
        let (roundTrips, resends) = try await update(repl, serial, try #require(link.channel(MonocleChannel.data))) { progress in
            if progress.phase == .verifying { verifying.withLock { $0 = $0 ?? clock.now } }
        }
        let end = clock.now
        let acks = acknowledgements(ble) - acksBefore
        let dropped = (try await vm.stats()["callbacks_dropped"] ?? 0) - droppedBefore

        let again = try await events.nextLink()
        let check = RawRepl(channel: try #require(again.channel(MonocleChannel.serial)), clock: ContinuousClock())
        try await check.enter()
        let booted = try await FPGAUpdate.version(repl: check)
        let version = String(decoding: image[20..<32], as: UTF8.self)
        if method != "noa" || image.count == FPGACommands.doneOffset {
            guard booted == version else { throw TestFailure("\(method): the FPGA booted \(booted), not \(version)") }
        }
        emit([
            "what": "fpga", "method": method, "bytes": image.count, "seconds": seconds(end - start),
            "readback_seconds": seconds(end - (verifying.withLock { $0 } ?? end)), "repl_round_trips": roundTrips,
            "data_acks": acks, "resends": resends, "callbacks_dropped": dropped,
        ])
        return again
    }

    /// A firmware image through the bootloader (Firmware.SecureDFU), timed from the first request
    /// to the last Execute's answer; the new image boots.
    static func firmware(
        supervisor: LinkSupervisor, vm: VirtualMonocle, events: AsyncStream<LinkEvent>, directory: String
    ) async throws {
        let made = try await DFUPackages.make(size: dfuBytes, version: "v99.000.0015", in: directory)
        let package = try DFUPackage(path: made.path)
        let (image, initPacket) = (package.image, package.initPacket)
        await supervisor.suspend()
        try await vm.call("EnterDFU")
        let (took, payload) = try await supervisor.withBootloader(timeout: .seconds(30), connectWindow: .seconds(60)) { link in
            let packet = try #require(link.channel(DFUChannel.packet))
            let dfu = SecureDFU(
                control: try #require(link.channel(DFUChannel.control)), packet: packet, clock: ContinuousClock())
            let clock = ContinuousClock()
            let start = clock.now
            try await dfu.update(initPacket: initPacket, image: image)
            return (clock.now - start, packet.maxPacketSize)
        }
        let limit = try await limit(vm, payload: payload)
        await supervisor.resume()
        _ = try await events.nextLink()
        guard try await vm.stats()["dfu_boots"] == 1 else { throw TestFailure("the new firmware did not boot") }
        emit([
            "what": "dfu", "bytes": image.count, "seconds": seconds(took), "payload": payload, "limit_bytes_per_s": limit,
            "prn": Int(DFUSettings().packetReceiptInterval),
        ])
    }

    /// Bytes/s the link model carries one way in packets of `payload` bytes.
    static func limit(_ vm: VirtualMonocle, payload: Int) async throws -> Double {
        guard case .double(let value) = try await vm.call("LinkLimit", [.uint32(UInt32(payload))]).first?.unwrapped else {
            throw TestFailure("LinkLimit gave no number")
        }
        return value
    }

    /// The fpa: notifications the virtual Monocle sent so far (its --record file).
    static func acknowledgements(_ ble: BLEWorld) -> Int {
        let text = (try? String(contentsOfFile: ble.recordFile(monocle), encoding: .utf8)) ?? ""
        let ack = Data("fpa:".utf8).map { String(format: "%02x", $0) }.joined()
        return text.split(separator: "\n").filter { $0.contains("\"notify\"") && $0.contains("\"hex\": \"\(ack)") }.count
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    static func emit(_ fields: [String: Any]) {
        let json = (try? JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys])) ?? Data()
        FileHandle.standardOutput.write(Data("bench-update: ".utf8) + json + Data("\n".utf8))
    }
}
