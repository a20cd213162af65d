// SPDX-License-Identifier: GPL-2.0-or-later
import LinkKit
import Monocle
import Synchronization
import Testing

@Suite("Raw REPL driver", .timeLimit(.minutes(5)))
struct RawReplTests {
    private func settings() -> ReplSettings {
        var s = ReplSettings()
        s.drain = .milliseconds(20)
        s.bannerTimeout = .milliseconds(200)
        s.commandTimeout = .milliseconds(500)
        return s
    }

    @Test("enters from a running main.py with stale output, then runs commands; replies come a byte at a time", arguments: [1, 3, 253])
    func enterAndRun(split: Int) async throws {
        let device = FakeREPLDevice(
            split: split,
            greeting: "Traceback (most recent call last):\r\nKeyboardInterrupt: \r\nraw REPL; CTRL-B to exit\r\n>"
        ) { code in
            code == "print(1+1)" ? ("2\r\n", "") : code.hasPrefix("print('glassd-sync") ? (String(code.dropFirst(7).dropLast(2)) + "\r\n", "") : ("", "")
        }
        let repl = RawRepl(channel: device, clock: ContinuousClock(), settings: settings())
        try await repl.enter()
        #expect(try await repl.execute("print(1+1)") == "2\r\n")
        #expect(await repl.roundTrips == 2)  // the sync probe and the command
        // Ctrl-C, Ctrl-C, Ctrl-A, then commands; never 0x1C.
        #expect(Array(device.written.prefix(3)) == [0x03, 0x03, 0x01])
        #expect(!device.written.contains(0x1C))
        #expect(device.commands.last == "print(1+1)")
    }

    @Test("a traceback becomes a typed error with the exception line")
    func traceback() async throws {
        let device = FakeREPLDevice { code in
            code.hasPrefix("print('glassd-sync") ? (String(code.dropFirst(7).dropLast(2)), "") :
                ("", "Traceback (most recent call last):\r\n  File \"<stdin>\", line 1, in <module>\r\nNameError: name 'nope' isn't defined\r\n")
        }
        let repl = RawRepl(channel: device, clock: ContinuousClock(), settings: settings())
        try await repl.enter()
        await #expect(throws: ReplError.traceback("NameError: name 'nope' isn't defined")) {
            try await repl.execute("nope")
        }
    }

    @Test("Ctrl-A lost on the way: it retries and gets in")
    func retriesEnter() async throws {
        let device = FakeREPLDevice { code in (String(code.dropFirst(7).dropLast(2)), "") }
        device.state.withLock { $0.swallowCtrlA = 2 }
        let repl = RawRepl(channel: device, clock: ContinuousClock(), settings: settings())
        try await repl.enter()
        #expect(device.written.filter { $0 == 0x01 }.count == 3)
    }

    @Test("a device that never answers gives noBanner after the set attempts")
    func givesUp() async throws {
        let device = FakeREPLDevice()
        device.state.withLock { $0.swallowCtrlA = 100 }
        let repl = RawRepl(channel: device, clock: ContinuousClock(), settings: settings())
        await #expect(throws: ReplError.noBanner(attempts: 4)) { try await repl.enter() }
    }

    @Test("a lost byte in a reply times out that command; the next enter resynchronises")
    func lostByte() async throws {
        let device = FakeREPLDevice { code in
            code.hasPrefix("print('glassd-sync") ? (String(code.dropFirst(7).dropLast(2)), "") : ("fine", "")
        }
        let repl = RawRepl(channel: device, clock: ContinuousClock(), settings: settings())
        try await repl.enter()
        // Lose the second \x04 of the next reply ("OKfine\x04\x04>": index 7).
        device.state.withLock { $0.dropNextReplyByte = 7 }
        await #expect(throws: ReplError.timeout("a REPL command")) { try await repl.execute("x=1") }
        try await repl.enter()
        #expect(try await repl.execute("x=1") == "fine")
    }

    @Test("refuses control bytes and commands that would overflow the device's ring")
    func refuses() async throws {
        let device = FakeREPLDevice()
        let repl = RawRepl(channel: device, clock: ContinuousClock(), settings: settings())
        await #expect(throws: ReplError.forbiddenByte(0x1C)) { try await repl.execute("print('\u{1C}')") }
        await #expect(throws: ReplError.forbiddenByte(0x03)) { try await repl.execute("a\u{03}") }
        await #expect(throws: ReplError.commandTooLong(1001, limit: 960)) {
            try await repl.execute(String(repeating: "x", count: 1000))
        }
        #expect(device.written.isEmpty)
    }

    @Test("an inbox overflow is lost bytes, never a silent gap")
    func overflow() async throws {
        let device = FakeREPLDevice { code in (String(code.dropFirst(7).dropLast(2)), "") }
        let repl = RawRepl(channel: device, clock: ContinuousClock(), settings: settings())
        try await repl.enter()
        for _ in 0..<(device.incoming.capacity + 5) { device.incoming.push([0x41]) }
        await #expect(throws: ReplError.lostBytes) { try await repl.execute("x=1") }
    }

    @Test("two callers at once: one command in flight at a time, each gets its own answer")
    func oneInFlight() async throws {
        let device = FakeREPLDevice(split: 7) { code in
            code.hasPrefix("print('glassd-sync") ? (String(code.dropFirst(7).dropLast(2)), "") : (code.uppercased(), "")
        }
        let repl = RawRepl(channel: device, clock: ContinuousClock(), settings: settings())
        try await repl.enter()
        try await withThrowingTaskGroup(of: (String, String).self) { group in
            for i in 0..<20 {
                group.addTask { ("x\(i)", try await repl.execute("x\(i)")) }
            }
            for try await (code, answer) in group { #expect(answer == code.uppercased()) }
        }
        // Each command went out whole before the next began.
        #expect(Set(device.commands.suffix(20)) == Set((0..<20).map { "x\($0)" }))
    }

    @Test("soft reboot and start")
    func rebootAndStart() async throws {
        let device = FakeREPLDevice { code in (String(code.dropFirst(7).dropLast(2)), "") }
        let repl = RawRepl(channel: device, clock: ContinuousClock(), settings: settings())
        try await repl.enter()
        try await repl.softReboot()
        #expect(device.state.withLock { $0.reboots } == 1)
        try await repl.enter()
        try await repl.start("run()")
        #expect(device.commands.last == "run()")
    }
}
