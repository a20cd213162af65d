// SPDX-License-Identifier: GPL-2.0-or-later
import Concurrency
import LinkKit

/// The tag in front of each entry of `LuaRepl.printed`.
private enum Tag {
    static let text: UInt8 = 0
    static let lost: UInt8 = 1
}

/// Timing and limits of the Lua REPL driver.
public struct LuaReplSettings: Sendable {
    /// How long one command may take, unless it says otherwise.
    public var commandTimeout: Duration = .seconds(3)
    /// How long to wait for a handshake probe's reply before breaking again.
    public var handshakeTimeout: Duration = .seconds(2)
    /// Break + probe rounds before giving up.
    public var handshakeAttempts = 3
    /// How often a probe is sent again when the break hit the probe itself.
    public var probeRepeats = 2
    /// Printed notifications kept while no command waits for them (a chatty script cannot grow
    /// the daemon); older ones are dropped.
    public var backlog = 256

    public init() {}
}

/// Drives the Frame's Lua REPL over its one RX/TX pair. Every write is one Lua chunk (or a
/// single control byte); every notification is print text, or app data when it starts with
/// 0x01. `run()` reads the channel and hands app data to `onData` as it comes, keeping print
/// text for the command that waits for it. One command is in flight at a time: the firmware
/// keeps one pending chunk, and a second write would replace the first.
///
/// The device's output cannot be trusted to be in step (a script still printing, a reply that
/// came after its timeout, an error from the interrupted app), so the driver synchronises with a
/// probe (`handshake`) before its first command and after anything that may have put it out of
/// step; then each command's replies are the next lines printed.
public actor LuaRepl<C: Clock> where C.Duration == Duration {
    nonisolated let channel: any ByteChannel
    nonisolated let clock: C
    public nonisolated let settings: LuaReplSettings
    nonisolated let onData: @Sendable (Incoming) -> Void
    /// Print text, tagged: `[text, bytes…]`, or `[lost]` when notifications were lost.
    nonisolated let printed: PacketInbox
    private let exchange = AsyncGate()
    private var nonce: UInt64
    /// Whether the next printed line belongs to the next command.
    private var inStep = false
    /// Commands and probes answered, for tests and benchmarks.
    public private(set) var roundTrips = 0

    /// `onData` gets every app-data notification (the 0x01 prefix included) and every report of
    /// lost notifications, from `run()`'s task, in order: it must not block. `nonce` seeds the
    /// handshake tokens (random by default, so a probe from an earlier connection never matches).
    public init(
        channel: any ByteChannel, clock: C, settings: LuaReplSettings = LuaReplSettings(),
        nonce: UInt64 = .random(in: 0...(UInt64.max / 2)),
        onData: @escaping @Sendable (Incoming) -> Void
    ) {
        self.channel = channel
        self.clock = clock
        self.settings = settings
        self.nonce = nonce
        self.onData = onData
        printed = PacketInbox(capacity: settings.backlog)
    }

    /// The sizes this link allows.
    public nonisolated var mtu: FrameMTU { FrameMTU(attPayload: channel.maxPacketSize) }

    /// Reads the channel until it ends (or the task is cancelled): app data to `onData`, print
    /// text kept for the commands. Run it once, alongside the commands.
    public nonisolated func run() async {
        for await item in channel.incoming {
            switch item {
            case .packet(let bytes) where bytes.first == AppMessage.dataPrefix:
                onData(.packet(bytes))
            case .packet(let bytes):
                printed.push([Tag.text] + bytes)
            case .overflow(let dropped):
                // Which were data and which print text is unknown: both sides are told.
                onData(.overflow(dropped: dropped))
                printed.push([Tag.lost])
            }
        }
        printed.finish()
    }

    // MARK: Control

    /// Stops the running script (0x03). What it prints on the way out is stale output.
    public func breakScript() async throws(LuaReplError) {
        try await locked { () async throws(LuaReplError) in
            inStep = false
            try await send([0x03])
        }
    }

    /// Resets the Lua VM, which then runs main.lua (0x04). The firmware sees it only while its
    /// REPL waits, so break a running script first.
    public func reset() async throws(LuaReplError) {
        try await locked { () async throws(LuaReplError) in
            inStep = false
            try await send([0x04])
        }
    }

    /// Breaks whatever runs and waits until the REPL answers a fresh probe, dropping everything
    /// printed before that answer.
    public func handshake() async throws(LuaReplError) {
        try await locked { () async throws(LuaReplError) in try await synchronise() }
    }

    // MARK: Commands

    /// Runs `chunk` and returns its `replies` printed lines (at least one), joined by `\n`. A
    /// Lua error printed instead throws `.luaError`. The chunk must fit one write.
    @discardableResult
    public func execute(_ chunk: String, replies: Int = 1, timeout: Duration? = nil) async throws(LuaReplError) -> String {
        let bytes = try checked(chunk)
        return try await locked { () async throws(LuaReplError) -> String in
            if !inStep { try await synchronise() }
            await discardPending()
            inStep = false
            try await send(bytes)
            let deadline = clock.now.advanced(by: timeout ?? settings.commandTimeout)
            var lines: [String] = []
            while lines.count < max(1, replies) {
                switch await nextLines(until: deadline) {
                case .lines(let new):
                    if new.contains(where: LuaOutput.isError) {
                        // An error ends the chunk: nothing more of it will come.
                        inStep = true
                        throw .luaError(new.joined(separator: "\n"))
                    }
                    lines += new
                case .lost: throw .lostOutput
                case .timedOut: throw .timeout("a Lua command")
                case .cancelled: throw .cancelled
                case .ended: throw .closed
                }
            }
            inStep = true
            roundTrips += 1
            return lines.joined(separator: "\n")
        }
    }

    /// Sends `chunk` that keeps running (the app's main loop) without waiting for a reply: what
    /// it prints and sends comes later. The next command breaks it first.
    public func start(_ chunk: String) async throws(LuaReplError) {
        let bytes = try checked(chunk)
        try await locked { () async throws(LuaReplError) in
            if !inStep { try await synchronise() }
            await discardPending()
            inStep = false
            try await send(bytes)
        }
    }

    // MARK: Handshake

    private func synchronise() async throws(LuaReplError) {
        for _ in 0..<max(1, settings.handshakeAttempts) {
            try await send([0x03])
            if try await probe() {
                inStep = true
                return
            }
        }
        throw .noHandshake(attempts: max(1, settings.handshakeAttempts))
    }

    /// Sends `print('glassd:<nonce>')` and drops every line until exactly that one: true when
    /// it came in time.
    private func probe() async throws(LuaReplError) -> Bool {
        nonce &+= 1
        let token = "glassd:\(nonce)"
        let chunk = "print('\(token)')"
        try await send(Array(chunk.utf8))
        let deadline = clock.now.advanced(by: settings.handshakeTimeout)
        var repeats = 0
        while true {
            switch await nextLines(until: deadline) {
            case .lines(let lines):
                if lines.contains(token) {
                    roundTrips += 1
                    return true
                }
                // The break reached the REPL after the probe did and stopped the probe itself.
                if repeats < settings.probeRepeats, lines.contains(where: { $0.contains(chunk) && $0.contains("break signal") }) {
                    repeats += 1
                    try await send(Array(chunk.utf8))
                }
            case .lost: continue
            case .timedOut: return false
            case .cancelled: throw .cancelled
            case .ended: throw .closed
            }
        }
    }

    // MARK: Plumbing

    /// The chunk's bytes, if the firmware will take them as one Lua chunk.
    private func checked(_ chunk: String) throws(LuaReplError) -> [UInt8] {
        let bytes = Array(chunk.utf8)
        guard let first = bytes.first else { throw .forbiddenChunk("it is empty") }
        // The firmware reads these first bytes as data, break, reset and "remove main.lua".
        guard ![0x01, 0x03, 0x04, 0x05].contains(first) else {
            throw .forbiddenChunk("it starts with control byte \(first)")
        }
        // The firmware copies the chunk with strcpy: a NUL would cut it short.
        guard !bytes.contains(0) else { throw .forbiddenChunk("it holds a NUL byte") }
        let limit = mtu.maxLuaString
        guard bytes.count <= limit else { throw .chunkTooLong(bytes.count, limit: limit) }
        return bytes
    }

    private func send(_ bytes: [UInt8]) async throws(LuaReplError) {
        do {
            try await channel.write(bytes)
        } catch is CancellationError {
            throw .cancelled
        } catch ChannelError.tooLong(let size, let limit) {
            throw .chunkTooLong(size, limit: limit)
        } catch {
            throw .closed
        }
    }

    /// Runs `body` holding the exchange; waiting for it may be cancelled.
    private func locked<T: Sendable>(_ body: () async throws(LuaReplError) -> T) async throws(LuaReplError) -> T {
        do {
            return try await exchange.withLock { try await body() }
        } catch let error as LuaReplError {
            throw error
        } catch {
            throw .cancelled
        }
    }

    private enum Printed {
        case lines([String])
        case lost, timedOut, cancelled, ended
    }

    private func nextLines(until deadline: C.Instant) async -> Printed {
        switch await printed.next(until: deadline, on: clock) {
        case .item(.packet(let tagged)):
            guard tagged.first == Tag.text else { return .lost }
            return .lines(LuaOutput.lines(Array(tagged.dropFirst())))
        case .item(.overflow): return .lost
        case .ended: return .ended
        case .timedOut: return Task.isCancelled ? .cancelled : .timedOut
        }
    }

    /// Drops what was printed before now: it cannot belong to the next command. A deadline of
    /// now returns what is buffered and never waits.
    private func discardPending() async {
        while case .item = await printed.next(until: clock.now, on: clock) {}
    }
}
