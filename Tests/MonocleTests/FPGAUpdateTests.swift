// SPDX-License-Identifier: GPL-2.0-or-later
import Crypto
import Foundation
import Monocle
import Synchronization
import Testing

/// The device side of the FPGA commands, in Swift: the flash as NOR (erase sets 0xFF, a write
/// clears bits), the write count `_gf`, and the faults the tests ask for.
final class FakeFPGAFlash: Sendable {
    /// Short REPL timings: the fake answers at once.
    static var replSettings: ReplSettings {
        var s = ReplSettings()
        s.drain = .milliseconds(10)
        s.bannerTimeout = .milliseconds(200)
        s.commandTimeout = .milliseconds(300)
        return s
    }

    struct State {
        var flash = [UInt8](repeating: 0x5A, count: 0x6D * 4096)  // not erased yet
        var count = 0
        var erases = 0
        /// Write commands seen so far, and the ones whose reply to garble (once each).
        var writes = 0
        var garble: Set<Int> = []
        /// A write whose bytes land but whose reply comes out empty: the host resends it.
        var emptyReply: Set<Int> = []
        /// A flash byte to flip after it is written (a bad page).
        var flip: Int?
        var resets = 0
    }

    let state = Mutex(State())
    static let end = FPGACommands.doneOffset

    /// Runs one command as the device would.
    func execute(_ code: String) -> (stdout: String, stderr: String) {
        if code.hasPrefix("print('glassd-sync") { return (String(code.dropFirst(7).dropLast(2)) + "\r\n", "") }
        return state.withLock { s -> (String, String) in
            if code == FPGACommands.prepare {
                s.flash = [UInt8](repeating: 0xFF, count: s.flash.count)
                s.count = 0
                s.erases += 1
                return ("erased\r\n", "")
            }
            if code.hasPrefix("if _gf=="), let open = code.range(of: "a2b_base64(b'"), let close = code.range(of: "'))") {
                let offset = Int(code[code.index(code.startIndex, offsetBy: 8)..<code.firstIndex(of: ":")!])!
                let bytes = [UInt8](Data(base64Encoded: String(code[open.upperBound..<close.lowerBound]))!)
                s.writes += 1
                if s.count == offset { program(&s, bytes) }
                if s.garble.remove(s.writes) != nil { return ("OK?\r\n", "") }
                if s.emptyReply.remove(s.writes) != nil { return ("", "") }
                return ("\(s.count)\r\n", "")
            }
            if code == FPGACommands.pad {
                program(&s, [UInt8](repeating: 0xFF, count: Self.end - s.count))
                return ("\(s.count)\r\n", "")
            }
            if code == FPGACommands.markDone {
                if s.count == Self.end {
                    program(&s, Array("done".utf8))
                    s.count = Self.end
                }
                return ("\(s.count)\r\n", "")
            }
            if let call = code.split(separator: "\n").first(where: { $0.hasPrefix("_gv(") }) {
                let args = call.dropFirst(4).dropLast().split(separator: ",").map { Int($0)! }
                let digest = SHA256.hash(data: s.flash[args[0]..<args[1]])
                return (digest.map { String(format: "%02x", $0) }.joined() + "\r\n", "")
            }
            if code == FPGACommands.reset {
                s.resets += 1
                return ("Resetting...\r\n", "")
            }
            return ("", "Traceback (most recent call last):\r\nNameError: unknown command\r\n")
        }
    }

    func program(_ s: inout State, _ bytes: [UInt8]) {
        for (i, b) in bytes.enumerated() { s.flash[s.count + i] &= b }
        if let flip = s.flip, flip >= s.count, flip < s.count + bytes.count { s.flash[flip] ^= 0x01 }
        s.count += bytes.count
    }
}

@Suite("FPGA update", .timeLimit(.minutes(5)))
struct FPGAUpdateTests {
    static func image(_ n: Int) -> [UInt8] { (0..<n).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) } }

    /// A REPL over a fake device that runs the FPGA commands.
    private func connect(_ flash: FakeFPGAFlash) async throws -> (RawRepl<ContinuousClock>, FakeREPLDevice) {
        let device = FakeREPLDevice { code in flash.execute(code) }
        let repl = RawRepl(channel: device, clock: ContinuousClock(), settings: FakeFPGAFlash.replSettings)
        try await repl.enter()
        return (repl, device)
    }

    @Test("every command is printable ASCII within the ring; chunks fill it")
    func commandsAreSafe() {
        let chunk = FPGACommands.bytesPerChunk(maxCommandBytes: 960)
        let command = FPGACommands.write(Self.image(chunk), at: 444_000)
        #expect(command.utf8.count + 1 <= 960)
        #expect(command.utf8.count + 1 >= 960 - 12)
        #expect(chunk == 654)
        for code in [
            command, FPGACommands.prepare, FPGACommands.pad, FPGACommands.digest(from: 0, to: 444_430),
            FPGACommands.markDone, FPGACommands.reset, FPGACommands.version,
        ] {
            #expect(code.utf8.allSatisfy { $0 == 0x0A || ($0 >= 0x20 && $0 < 0x7F) })
            #expect(code.utf8.count + 1 <= 960)
        }
        // Noa's chunking for maxLen 253 needs 2,905 round trips for the 444,430 bytes; this 680.
        #expect((444_430 + chunk - 1) / chunk == 680)
    }

    @Test("a small image: erase, exact writes, padding, readback, done, reset; progress in order")
    func smallImage() async throws {
        let flash = FakeFPGAFlash()
        let (repl, device) = try await connect(flash)
        let image = Self.image(2000)
        let seen = Mutex<[FPGAProgress]>([])
        let report = try await FPGAUpdate.run(image: image, repl: repl) { p in seen.withLock { $0.append(p) } }
        let chunk = FPGACommands.bytesPerChunk(maxCommandBytes: 960)
        var expected = ["print('glassd-sync-1')", FPGACommands.prepare]
        var offset = 0
        while offset < image.count {
            let end = min(offset + chunk, image.count)
            expected.append(FPGACommands.write(image[offset..<end], at: offset))
            offset = end
        }
        expected.append(FPGACommands.pad)
        var start = 0
        while start < FPGACommands.doneOffset {
            let stop = min(start + 16384, FPGACommands.doneOffset)
            expected.append(FPGACommands.digest(from: start, to: stop))
            start = stop
        }
        expected += [FPGACommands.markDone, FPGACommands.reset]
        #expect(device.commands == expected)
        #expect(
            device.commands[2]
                == "if _gf==0:update.Fpga.write(ubinascii.a2b_base64(b'\(Data(image[0..<654]).base64EncodedString())'));_gf+=654\nprint(_gf)")
        let s = flash.state.withLock { $0 }
        #expect(Array(s.flash[0..<2000]) == image)
        #expect(s.flash[2000..<FPGACommands.doneOffset].allSatisfy { $0 == 0xFF })
        #expect(Array(s.flash[FPGACommands.doneOffset..<FPGACommands.doneOffset + 4]) == Array("done".utf8))
        #expect(s.resets == 1)
        #expect(report == FPGAUpdateReport(imageBytes: 2000, writeCommands: 4, resends: 0, roundTrips: 1 + 4 + 1 + 28 + 1 + 1))
        let progress = seen.withLock { $0 }
        #expect(progress.first == FPGAProgress(bytes: 0, total: 2000, phase: .erasing))
        #expect(progress.contains(FPGAProgress(bytes: 2000, total: 2000, phase: .writing)))
        #expect(progress.last == FPGAProgress(bytes: FPGACommands.doneOffset, total: FPGACommands.doneOffset, phase: .verifying))
        #expect(!device.written.contains(0x1C))
    }

    @Test("a readback mismatch is refused: nothing marked done, no reset")
    func mismatchRefused() async throws {
        let flash = FakeFPGAFlash()
        flash.state.withLock { $0.flip = 1500 }
        let (repl, device) = try await connect(flash)
        await #expect(throws: FPGAUpdateError.verifyMismatch(from: 0, to: 16384)) {
            try await FPGAUpdate.run(image: Self.image(2000), repl: repl)
        }
        let s = flash.state.withLock { $0 }
        #expect(s.flash[FPGACommands.doneOffset..<FPGACommands.doneOffset + 4].allSatisfy { $0 == 0xFF })
        #expect(s.resets == 0)
        #expect(!device.commands.contains(FPGACommands.markDone))
    }

    @Test("a garbled reply resends the chunk; an empty reply resends it too and the device skips the repeat")
    func resends() async throws {
        let flash = FakeFPGAFlash()
        flash.state.withLock {
            $0.garble = [2]
            $0.emptyReply = [4]
        }
        let (repl, device) = try await connect(flash)
        let image = Self.image(3000)
        let report = try await FPGAUpdate.run(image: image, repl: repl)
        #expect(report.resends == 2)
        #expect(report.writeCommands == 5)
        let writes = device.commands.filter { $0.hasPrefix("if _gf==") && $0.contains("base64") }
        #expect(writes.count == 7)
        #expect(writes[1] == writes[2])  // the garbled one, sent again
        #expect(writes[3] == writes[4])  // the empty one, sent again (and skipped there)
        let s = flash.state.withLock { $0 }
        #expect(Array(s.flash[0..<3000]) == image)
        #expect(s.resets == 1)
    }

    @Test("a reply cut short times out: the REPL is entered again and the command resent")
    func timeoutReenters() async throws {
        let flash = FakeFPGAFlash()
        let (repl, device) = try await connect(flash)
        // The erase's reply loses its first 0x04 ("OK" "erased\r\n" here): it never completes.
        device.state.withLock { $0.dropNextReplyByte = 10 }
        var update = FPGAUpdateSettings()
        update.eraseTimeout = .milliseconds(300)
        let report = try await FPGAUpdate.run(image: Self.image(700), repl: repl, settings: update)
        #expect(report.resends == 1)
        #expect(flash.state.withLock { $0.erases } == 2)
        #expect(device.commands.filter { $0.hasPrefix("print('glassd-sync") }.count == 2)
        #expect(flash.state.withLock { Array($0.flash[0..<700]) } == Self.image(700))
    }

    @Test("replies that stay wrong give up after the set attempts, without done")
    func givesUp() async throws {
        let flash = FakeFPGAFlash()
        flash.state.withLock { $0.garble = [1, 2, 3] }
        let (repl, device) = try await connect(flash)
        await #expect(throws: FPGAUpdateError.unexpectedReply(step: "the write at 0", reply: "OK?")) {
            try await FPGAUpdate.run(image: Self.image(100), repl: repl)
        }
        #expect(!device.commands.contains(FPGACommands.markDone))
    }

    @Test("a device whose count is elsewhere stops the update")
    func outOfStep() async throws {
        let flash = FakeFPGAFlash()
        let device = FakeREPLDevice { code in
            if code.hasPrefix("if _gf==") && code.contains("base64") { return ("7\r\n", "") }
            return flash.execute(code)
        }
        let repl = RawRepl(channel: device, clock: ContinuousClock(), settings: FakeFPGAFlash.replSettings)
        try await repl.enter()
        await #expect(throws: FPGAUpdateError.outOfStep(expected: 100, device: 7)) {
            try await FPGAUpdate.run(image: Self.image(100), repl: repl)
        }
        #expect(!device.commands.contains(FPGACommands.markDone))
    }

    @Test("empty and oversized images are refused before anything is sent")
    func sizes() async throws {
        let flash = FakeFPGAFlash()
        let (repl, device) = try await connect(flash)
        await #expect(throws: FPGAUpdateError.emptyImage) { try await FPGAUpdate.run(image: [], repl: repl) }
        await #expect(throws: FPGAUpdateError.imageTooLarge(444_431, limit: 444_430)) {
            try await FPGAUpdate.run(image: [UInt8](repeating: 0, count: 444_431), repl: repl)
        }
        #expect(device.commands.count == 1)
    }

    @Test(
        "run on a real MicroPython with the virtual Monocle's update module, the commands write, verify and mark the image",
        .enabled(if: MicroPython.available))
    func onMicroPython() async throws {
        let directory = try MicroPython.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let world = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("World/vmonocle")
        for module in ["update.py", "fpga.py"] {
            try FileManager.default.copyItem(atPath: world.appendingPathComponent(module).path, toPath: directory + "/" + module)
        }
        // The stubs' host link, reduced to what they use here.
        try "serial_on = False\nstate_dir = '.'\nfpga_version = 'v23.230.0808'\ndef event(t):\n pass\ndef send(t, p=b''):\n pass\n"
            .write(toFile: directory + "/_vmhost.py", atomically: true, encoding: .utf8)
        let image = Self.image(5000)
        let chunk = FPGACommands.bytesPerChunk(maxCommandBytes: 960)
        var commands = [FPGACommands.prepare]
        var offset = 0
        while offset < image.count {
            let end = min(offset + chunk, image.count)
            commands.append(FPGACommands.write(image[offset..<end], at: offset))
            if offset == chunk { commands.append(commands.last!) }  // a resend: skipped by the device
            offset = end
        }
        commands += [
            FPGACommands.pad, FPGACommands.digest(from: 0, to: 8192),
            FPGACommands.digest(from: 8192, to: FPGACommands.doneOffset), FPGACommands.markDone,
        ]
        let output = try await MicroPython.run(commands, in: directory).split(separator: "\n").map { String($0) }
        var padded = image + [UInt8](repeating: 0xFF, count: FPGACommands.doneOffset - image.count)
        let first = SHA256.hash(data: padded[0..<8192]).map { String(format: "%02x", $0) }.joined()
        let rest = SHA256.hash(data: padded[8192...]).map { String(format: "%02x", $0) }.joined()
        #expect(output.first == "erased")
        #expect(output.suffix(4) == ["\(FPGACommands.doneOffset)", first, rest, "\(FPGACommands.doneOffset)"])
        let written = try #require(FileManager.default.contents(atPath: directory + "/fpga_flash.bin"))
        padded += Array("done".utf8)
        #expect(Array(written.prefix(padded.count)) == padded)
        #expect(written.count == 0x6D * 4096)
    }
}
