// SPDX-License-Identifier: GPL-2.0-or-later
import Frame
import LinkKit
import Synchronization
import Testing
import TestSupport

/// Runs `body` with a REPL over `device` whose reader runs alongside; app data lands in `data`.
func withRepl<T: Sendable>(
    _ device: FakeFrame, clock: ManualClock = ManualClock(), settings: LuaReplSettings = LuaReplSettings(),
    data: Received? = nil, _ body: (LuaRepl<ManualClock>) async throws -> T
) async throws -> T {
    let repl = LuaRepl(channel: device, clock: clock, settings: settings, nonce: 100) { item in
        data?.items.withLock { $0.append(item) }
    }
    return try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { await repl.run() }
        defer { group.cancelAll() }
        return try await body(repl)
    }
}

/// App data as the REPL handed it on.
final class Received: Sendable {
    let items = Mutex<[Incoming]>([])
    var all: [Incoming] { items.withLock { $0 } }
}

@Suite("Lua REPL driver", .timeLimit(.minutes(5)))
struct LuaReplTests {
    static let arithmetic: @Sendable (String, inout FakeFrame.State) -> FakeFrame.Reply? = { chunk, _ in
        switch chunk {
        case "print(1+1)": .prints(["2"])
        case "print(1) print(2) print(3)": .prints(["1", "2", "3"])
        default: nil
        }
    }

    @Test("the handshake breaks the app and drops its stale output (old tokens, partial lines, errors) up to its own token")
    func handshakeThroughStaleOutput() async throws {
        let device = FakeFrame(running: true, handler: Self.arithmetic)
        device.state.withLock {
            $0.staleOnBreak = ["glassd:100", "glassd:1011", "glassd:10", "[string \"x()\"]:1: attempt to call a nil value", "glass", "d:101"]
        }
        try await withRepl(device) { repl async throws in
            try await repl.handshake()
            #expect(try await repl.execute("print(1+1)") == "2")
            #expect(await repl.roundTrips == 2)
        }
        #expect(device.writes.first == [0x03])
        #expect(device.probes == ["print('glassd:101')"])
        #expect(device.breaks == 1)
    }

    @Test("the first command synchronises by itself; later ones do not break again")
    func firstCommandSynchronises() async throws {
        let device = FakeFrame(handler: Self.arithmetic)
        try await withRepl(device) { repl async throws in
            #expect(try await repl.execute("print(1+1)") == "2")
            #expect(try await repl.execute("print(1) print(2) print(3)", replies: 3) == "1\n2\n3")
        }
        #expect(device.breaks == 1)
        #expect(device.probes.count == 1)
    }

    @Test("replies with line endings, as other firmware may print them", arguments: ["\n", "\r\n"])
    func lineEndings(ending: String) async throws {
        let device = FakeFrame(handler: Self.arithmetic)
        device.state.withLock { $0.lineEnding = ending }
        try await withRepl(device) { repl async throws in
            #expect(try await repl.execute("print(1) print(2) print(3)", replies: 3) == "1\n2\n3")
        }
    }

    @Test("a Lua error printed instead of the reply is a typed error; the REPL stays in step")
    func luaError() async throws {
        let device = FakeFrame(handler: Self.arithmetic)
        try await withRepl(device) { repl async throws in
            await #expect(throws: LuaReplError.luaError("[string \"nope()\"]:1: attempt to call a nil value (global 'nope')")) {
                try await repl.execute("nope()")
            }
            #expect(try await repl.execute("print(1+1)") == "2")
        }
        #expect(device.breaks == 1)
    }

    @Test("Lua error messages are recognised by their position, the break and the word error")
    func recognisesErrors() {
        #expect(LuaOutput.isError("[string \"print(x.y)\"]:1: attempt to index a nil value (global 'x')"))
        #expect(LuaOutput.isError("glassd_app.lua:42: bad argument #1 to 'text'"))
        #expect(LuaOutput.isError("error loading module 'glassd_app'"))
        #expect(LuaOutput.isError("break signal"))
        #expect(!LuaOutput.isError("1"))
        #expect(!LuaOutput.isError("v25.080.0838"))
        #expect(!LuaOutput.isError("87.5"))
        #expect(!LuaOutput.isError("glassd:12"))
        #expect(!LuaOutput.isError("[string"))
        #expect(LuaOutput.lines(Array("a\r\nb\n\nc".utf8)) == ["a", "b", "c"])
        #expect(LuaOutput.lines(Array("\n".utf8)).isEmpty)
    }

    @Test("refuses chunks longer than the link's Lua string, and ones the firmware would misread")
    func refuses() async throws {
        let device = FakeFrame(maxPacketSize: 244)
        try await withRepl(device) { repl async throws in
            #expect(repl.mtu.maxLuaString == 244)
            await #expect(throws: LuaReplError.chunkTooLong(245, limit: 244)) {
                try await repl.execute("print('\(String(repeating: "x", count: 236))')")
            }
            await #expect(throws: LuaReplError.forbiddenChunk("it is empty")) { try await repl.execute("") }
            await #expect(throws: LuaReplError.forbiddenChunk("it starts with control byte 3")) { try await repl.execute("\u{3}print(1)") }
            await #expect(throws: LuaReplError.forbiddenChunk("it starts with control byte 1")) { try await repl.start("\u{1}x") }
            await #expect(throws: LuaReplError.forbiddenChunk("it holds a NUL byte")) { try await repl.execute("print('a\u{0}b')") }
        }
        #expect(device.writes.isEmpty)
    }

    @Test("a command without its reply times out; the next one resynchronises and drops the late reply")
    func timeout() async throws {
        let clock = ManualClock()
        let device = FakeFrame(handler: Self.arithmetic)
        var settings = LuaReplSettings()
        settings.commandTimeout = .seconds(3)
        try await withRepl(device, clock: clock, settings: settings) { repl async throws in
            try await repl.handshake()
            device.state.withLock { $0.dropReplies = 1 }
            async let lost = #expect(throws: LuaReplError.timeout("a Lua command")) { try await repl.execute("print(1+1)") }
            await clock.sleeping()
            clock.advance(by: .seconds(3))
            _ = await lost
            device.print("2")  // the late reply
            #expect(try await repl.execute("print(1) print(2) print(3)", replies: 3) == "1\n2\n3")
        }
        #expect(device.breaks == 2)
        #expect(device.probes == ["print('glassd:101')", "print('glassd:102')"])
    }

    @Test("a lost break: the probe waits in the device, times out, and the next round gets through past the old token")
    func lostBreak() async throws {
        let clock = ManualClock()
        let device = FakeFrame(running: true, handler: Self.arithmetic)
        device.state.withLock { $0.loseBreaks = 1 }
        try await withRepl(device, clock: clock) { repl async throws in
            async let done: Void = repl.handshake()
            await clock.sleeping()
            clock.advance(by: LuaReplSettings().handshakeTimeout)
            try await done
            #expect(try await repl.execute("print(1+1)") == "2")
        }
        #expect(device.breaks == 2)
        // The first probe ran late (after the second break) and printed its token: ignored.
        #expect(device.ran.prefix(2) == ["print('glassd:101')", "print('glassd:102')"])
    }

    @Test("the break hit the probe itself: the probe is sent again, without a timeout")
    func breakHitsProbe() async throws {
        let device = FakeFrame(handler: Self.arithmetic)
        device.state.withLock { $0.breakHitsProbe = 1 }
        try await withRepl(device) { repl async throws in
            try await repl.handshake()
        }
        #expect(device.breaks == 1)
        #expect(device.probes == ["print('glassd:101')", "print('glassd:101')"])
    }

    @Test("a silent device: no handshake after every attempt")
    func silent() async throws {
        let clock = ManualClock()
        let device = FakeFrame()
        device.state.withLock { $0.silent = true }
        var settings = LuaReplSettings()
        settings.handshakeAttempts = 3
        try await withRepl(device, clock: clock, settings: settings) { repl async throws in
            async let outcome = #expect(throws: LuaReplError.noHandshake(attempts: 3)) { try await repl.handshake() }
            for _ in 0..<3 {
                await clock.sleeping()
                clock.advance(by: settings.handshakeTimeout)
            }
            _ = await outcome
        }
        #expect(device.breaks == 3)
    }

    @Test("app data goes to its handler, before, during and after commands, never into a reply")
    func routesData() async throws {
        let data = Received()
        let device = FakeFrame { chunk, _ in
            chunk == "go()" ? .notes([.data(.tap), .text("ok")]) : nil
        }
        try await withRepl(device, data: data) { repl async throws in
            device.send(.battery(50))
            #expect(try await repl.execute("go()") == "ok")
            device.send(.cancelled)
            // A round trip after it: the reader has passed the cancelled message on by then.
            #expect(try await repl.execute("go()") == "ok")
        }
        #expect(data.all == [.packet(AppMessage.battery(50).encoded), .packet(AppMessage.tap.encoded), .packet(AppMessage.cancelled.encoded), .packet(AppMessage.tap.encoded)])
    }

    @Test("start leaves the script running; the next command breaks it and drops what it printed")
    func startThenCommand() async throws {
        let data = Received()
        let device = FakeFrame { chunk, s in
            chunk == "run()" ? .notes(FakeFrame.start(&s)) : Self.arithmetic(chunk, &s)
        }
        device.state.withLock { $0.appVersion = "abc" }
        try await withRepl(device, data: data) { repl async throws in
            try await repl.start("run()")
            #expect(device.state.withLock { $0.running })
            device.print("tick")
            #expect(try await repl.execute("print(1+1)") == "2")
        }
        #expect(device.breaks == 2)
        #expect(data.all == [.packet(AppMessage.ready("abc").encoded)])
    }

    @Test("reset and break are single control bytes")
    func controlBytes() async throws {
        let device = FakeFrame()
        try await withRepl(device) { repl async throws in
            try await repl.breakScript()
            try await repl.reset()
        }
        #expect(device.writes == [[0x03], [0x04]])
    }

    @Test("the link ends: a waiting command says closed")
    func closed() async throws {
        let clock = ManualClock()
        let device = FakeFrame(handler: Self.arithmetic)
        try await withRepl(device, clock: clock) { repl async throws in
            try await repl.handshake()
            device.state.withLock { $0.silent = true }
            async let outcome = #expect(throws: LuaReplError.closed) { try await repl.execute("print(1+1)") }
            await clock.sleeping()
            device.incoming.finish()
            _ = await outcome
        }
    }

    @Test("cancelling the caller ends its wait with cancelled")
    func cancelled() async throws {
        let clock = ManualClock()
        let device = FakeFrame(handler: Self.arithmetic)
        try await withRepl(device, clock: clock) { repl async throws in
            try await repl.handshake()
            device.state.withLock { $0.silent = true }
            let task = Task { try await repl.execute("print(1+1)") }
            await clock.sleeping()
            task.cancel()
            await #expect(throws: LuaReplError.cancelled) { try await task.value }
        }
    }
}
