// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation
import LinkKit
import Monocle
import Synchronization
import Testing

/// The data channel with the receiver's behaviour (DeviceScripts/glassd_receiver.py) in Swift, on
/// the same fake flash: a chunk at the device's count is written, any other dropped, and each
/// answered with `fpa:<count>` (the script answers once per burst; the host takes either). `lose` names chunks (1-based) that never arrive.
final class FakeFPGAData: ByteChannel {
    let maxPacketSize: Int
    let framing = ChannelFraming.packets
    let incoming = PacketInbox()
    let flash: FakeFPGAFlash
    let lose: Mutex<Set<Int>>
    let frames = Mutex(0)

    init(flash: FakeFPGAFlash, maxPacketSize: Int = 40, lose: Set<Int> = []) {
        self.flash = flash
        self.maxPacketSize = maxPacketSize
        self.lose = Mutex(lose)
    }

    func write(_ bytes: [UInt8]) async throws {
        let n = frames.withLock { $0 += 1; return $0 }
        if lose.withLock({ $0.remove(n) }) != nil { return }
        guard bytes.starts(with: FPGACommands.dataPrefix), bytes.count > 8 else { return }
        let offset = bytes[4..<8].reduce(0) { $0 << 8 | Int($1) }
        let count = flash.state.withLock { s in
            if s.count == offset { flash.program(&s, Array(bytes[8...])) }
            return s.count
        }
        incoming.push(FPGACommands.ackPrefix + Array(String(count).utf8))
    }
}

@Suite("FPGA update, windowed", .timeLimit(.minutes(5)))
struct FPGAStreamTests {
    private func connect(_ flash: FakeFPGAFlash) async throws -> (RawRepl<ContinuousClock>, FakeREPLDevice) {
        let device = FakeREPLDevice { code in
            code.hasPrefix("import bluetooth") ? ("", "") : flash.execute(code)
        }
        let repl = RawRepl(channel: device, clock: ContinuousClock(), settings: FakeFPGAFlash.replSettings)
        try await repl.enter()
        return (repl, device)
    }

    @Test("the receiver command fits one REPL command and is printable ASCII")
    func receiverFits() {
        let code = FPGACommands.receiver(size: 444_430)
        #expect(code.utf8.count + 1 <= 960, "\(code.utf8.count) bytes")
        #expect(code.utf8.allSatisfy { $0 == 0x0A || ($0 >= 0x20 && $0 < 0x7F) })
        #expect(code.hasSuffix("\n_gfr(444430,update.Fpga.write)"))
        #expect(!code.contains("#"))
    }

    @Test("chunks go in order within the window, then the REPL verifies, marks done and resets")
    func streams() async throws {
        let flash = FakeFPGAFlash()
        let (repl, device) = try await connect(flash)
        let data = FakeFPGAData(flash: flash)
        let image = FPGAUpdateTests.image(3000)
        let report = try await FPGAUpdate.runWindowed(image: image, repl: repl, data: data, clock: ContinuousClock())
        #expect(report.writeCommands == 94)  // 32 bytes a chunk
        #expect(report.resends == 0)
        let s = flash.state.withLock { $0 }
        #expect(Array(s.flash[0..<3000]) == image)
        #expect(Array(s.flash[FPGACommands.doneOffset..<FPGACommands.doneOffset + 4]) == Array("done".utf8))
        #expect(s.resets == 1)
        #expect(device.commands.contains(FPGACommands.receiver(size: 3000)))
        #expect(!device.commands.contains { $0.contains("a2b_base64") })
    }

    @Test("a lost chunk: the device drops what follows, the host resends from the acknowledged offset")
    func lostChunk() async throws {
        let flash = FakeFPGAFlash()
        let (repl, _) = try await connect(flash)
        let data = FakeFPGAData(flash: flash, lose: [5, 40])
        let image = FPGAUpdateTests.image(3000)
        var stream = FPGAStreamSettings()
        stream.ackTimeout = .milliseconds(200)
        let report = try await FPGAUpdate.runWindowed(image: image, repl: repl, data: data, clock: ContinuousClock(), stream: stream)
        #expect(report.resends >= 2)
        let s = flash.state.withLock { $0 }
        #expect(Array(s.flash[0..<3000]) == image)
        #expect(s.resets == 1)
    }

    @Test("a silent receiver: bounded resends, then a timeout and nothing marked done")
    func silentReceiver() async throws {
        let flash = FakeFPGAFlash()
        let (repl, device) = try await connect(flash)
        let data = FakeFPGAData(flash: flash, lose: Set(1...1000))
        var stream = FPGAStreamSettings()
        stream.ackTimeout = .milliseconds(50)
        stream.silences = 2
        await #expect(throws: FPGAUpdateError.repl(.timeout("the FPGA receiver"))) {
            try await FPGAUpdate.runWindowed(
                image: FPGAUpdateTests.image(500), repl: repl, data: data, clock: ContinuousClock(), stream: stream)
        }
        #expect(!device.commands.contains(FPGACommands.markDone))
    }

    @Test("run on a real MicroPython, the receiver writes chunks in order, drops a gap and a repeat, and acknowledges", .enabled(if: MicroPython.available))
    func receiverOnMicroPython() async throws {
        let directory = try MicroPython.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let world = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("World/vmonocle")
        try FileManager.default.copyItem(atPath: world.appendingPathComponent("update.py").path, toPath: directory + "/update.py")
        try FileManager.default.copyItem(atPath: world.appendingPathComponent("fpga.py").path, toPath: directory + "/fpga.py")
        try "serial_on = False\nstate_dir = '.'\nfpga_version = 'v23.230.0808'\ndef event(t):\n pass\n"
            .write(toFile: directory + "/_vmhost.py", atomically: true, encoding: .utf8)
        // A data channel that hands over up to 3 queued messages at each sleep, as the scheduler would.
        try """
            _cb = None
            sent = []
            msgs = []
            def receive_callback(fn):
                global _cb
                _cb = fn
            def send(d):
                sent.append(bytes(d))
            def feed():
                for _ in range(3):
                    if msgs:
                        _cb(msgs.pop(0))
            """.write(toFile: directory + "/bluetooth.py", atomically: true, encoding: .utf8)
        try "from utime import ticks_ms, ticks_diff\nimport bluetooth\ndef sleep_ms(ms):\n    bluetooth.feed()\n"
            .write(toFile: directory + "/time.py", atomically: true, encoding: .utf8)
        let image = FPGAUpdateTests.image(1000)
        let piece = 245
        var frames: [[UInt8]] = []
        var offset = 0
        while offset < image.count {
            let end = min(offset + piece, image.count)
            frames.append(FPGACommands.dataFrame(image[offset..<end], at: offset))
            offset = end
        }
        // 0, 2 (a gap: dropped), 1, 1 (a repeat: dropped), 2, 3, 4
        let order = [frames[0], frames[2], frames[1], frames[1], frames[2], frames[3], frames[4]]
        try order.map { $0.map { String(format: "%02x", $0) }.joined() }.joined(separator: "\n")
            .write(toFile: directory + "/msgs.txt", atomically: true, encoding: .utf8)
        let output = try await MicroPython.run(
            [
                FPGACommands.prepare,
                "import bluetooth,ubinascii\nbluetooth.msgs=[ubinascii.unhexlify(l.strip()) for l in open('msgs.txt')]",
                FPGACommands.receiver(size: image.count),
                "print(b','.join(bluetooth.sent).decode())",
                FPGACommands.digest(from: 0, to: image.count),
            ], in: directory
        ).split(separator: "\n").map(String.init)
        #expect(output.count == 4)
        #expect(output[1] == "1000")
        // One answer per burst of 3: after 0, 2 (dropped), 1; after 1 (dropped), 2, 3; after 4.
        #expect(output[2] == "fpa:490,fpa:980,fpa:1000")
        let written = try #require(FileManager.default.contents(atPath: directory + "/fpga_flash.bin"))
        #expect(Array(written.prefix(1000)) == image)
    }
}
