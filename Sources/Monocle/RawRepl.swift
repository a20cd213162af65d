// SPDX-License-Identifier: GPL-2.0-or-later
import Concurrency
import LinkKit

/// Timing and limits of the raw-REPL driver.
public struct ReplSettings: Sendable {
    /// Attempts at entering the raw REPL before giving up.
    public var enterAttempts = 4
    /// How long to collect (and drop) output after the first Ctrl-C: a running main.py prints its
    /// KeyboardInterrupt traceback and maybe a banner.
    public var drain: Duration = .milliseconds(200)
    /// How long to wait for the banner after Ctrl-A.
    public var bannerTimeout: Duration = .seconds(1)
    /// How long one command may take, unless it says otherwise.
    public var commandTimeout: Duration = .seconds(5)
    /// The largest command (code + Ctrl-D): the device's REPL receive ring is 1024 bytes and drops
    /// what overflows, and only one command is ever in flight, so this is all that is pending.
    public var maxCommandBytes = 960

    public init() {}
}

/// Drives the Monocle's raw REPL over the serial channel: one command in flight at a time, each
/// answer parsed from the accumulated output. Never sends 0x1C, nor any control byte but its own.
public actor RawRepl<C: Clock> where C.Duration == Duration {
    let channel: any ByteChannel
    let clock: C
    public let settings: ReplSettings
    private var buffer = ReplBuffer()
    private var syncs: UInt32 = 0
    /// One exchange at a time, even if two tasks call in (the actor alone would interleave them
    /// at their awaits).
    private let exchange = AsyncGate()
    /// Round trips made (commands answered), for the benchmark.
    public private(set) var roundTrips = 0

    public init(channel: any ByteChannel, clock: C, settings: ReplSettings = ReplSettings()) {
        self.channel = channel
        self.clock = clock
        self.settings = settings
    }

    // MARK: Entering

    /// Interrupts whatever runs and enters the raw REPL: Ctrl-C, drain, Ctrl-C, Ctrl-A, then a
    /// probe whose echo proves the exchange is in step (stale banners and replies skipped).
    public func enter() async throws {
        try await exchange.withLock { try await enterOnce() }
    }

    private func enterOnce() async throws {
        for _ in 0..<settings.enterAttempts {
            try await send([0x03])
            try await drain(for: settings.drain)
            try await send([0x03])
            try await send([0x01])
            let deadline = clock.now.advanced(by: settings.bannerTimeout)
            guard try await wait(until: deadline, for: { $0.takeBanner() ? true : nil }) != nil else { continue }
            if try await sync() { return }
        }
        throw ReplError.noBanner(attempts: settings.enterAttempts)
    }

    /// Sends a probe and reads results until its answer: true when found in time.
    private func sync() async throws -> Bool {
        syncs &+= 1
        let token = "glassd-sync-\(syncs)"
        try await send(Array("print('\(token)')".utf8) + [0x04])
        let deadline = clock.now.advanced(by: settings.commandTimeout)
        while let result = try await wait(until: deadline, for: { $0.takeResult() }) {
            roundTrips += 1
            if result.stdout.contains(token) { return true }
        }
        return false
    }

    // MARK: Commands

    /// Runs `code` and returns what it printed; a traceback throws `ReplError.traceback`.
    @discardableResult
    public func execute(_ code: String, timeout: Duration? = nil) async throws -> String {
        try await exchange.withLock { try await run(code, timeout: timeout) }
    }

    private func run(_ code: String, timeout: Duration?) async throws -> String {
        let bytes = try command(code)
        try await send(bytes)
        let deadline = clock.now.advanced(by: timeout ?? settings.commandTimeout)
        guard let result = try await wait(until: deadline, for: { $0.takeResult() }) else {
            throw ReplError.timeout("a REPL command")
        }
        roundTrips += 1
        if !result.stderr.isEmpty { throw ReplError.traceback(result.exception ?? "an exception") }
        return result.stdout
    }

    /// Starts `code` that runs on (the scripts' main loop): returns once the device accepted it.
    public func start(_ code: String) async throws {
        try await exchange.withLock { try await startOnce(code) }
    }

    private func startOnce(_ code: String) async throws {
        try await send(try command(code))
        let deadline = clock.now.advanced(by: settings.commandTimeout)
        guard try await wait(until: deadline, for: { $0.take(through: "OK") ? true : nil }) != nil else {
            throw ReplError.timeout("starting the scripts")
        }
        roundTrips += 1
    }

    /// Soft-reboots the device (Ctrl-D on an empty line): main.py runs afresh.
    public func softReboot() async throws {
        try await exchange.withLock { try await rebootOnce() }
    }

    private func rebootOnce() async throws {
        try await send([0x03, 0x04])
        let deadline = clock.now.advanced(by: settings.commandTimeout)
        guard try await wait(until: deadline, for: { $0.take(through: "soft reboot") ? true : nil }) != nil else {
            throw ReplError.timeout("the soft reboot")
        }
        roundTrips += 1
        buffer.clear()
    }

    /// `code` + Ctrl-D, checked: printable ASCII and newlines only, within the ring.
    private func command(_ code: String) throws -> [UInt8] {
        let bytes = Array(code.utf8) + [0x04]
        if let bad = bytes.dropLast().first(where: { !($0 == 0x0A || ($0 >= 0x20 && $0 < 0x7F)) }) {
            throw ReplError.forbiddenByte(bad)
        }
        guard bytes.count <= settings.maxCommandBytes else {
            throw ReplError.commandTooLong(bytes.count, limit: settings.maxCommandBytes)
        }
        return bytes
    }

    private func send(_ bytes: [UInt8]) async throws {
        // The one check that matters most: 0x1C would put the glasses into safe mode.
        guard !bytes.contains(0x1C) else { throw ReplError.forbiddenByte(0x1C) }
        do {
            try await channel.write(bytes)
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw ReplError.closed
        }
    }

    // MARK: Reading

    /// Feeds output into the buffer until `take` finds what it looks for (returned) or the
    /// deadline passes (nil). Lost bytes and the link's end throw.
    private func wait<T: Sendable>(until deadline: C.Instant, for take: (inout ReplBuffer) -> T?) async throws -> T? {
        while true {
            if let found = take(&buffer) { return found }
            switch await channel.incoming.next(until: deadline, on: clock) {
            case .item(.packet(let bytes)): buffer.append(bytes)
            case .item(.overflow):
                buffer.clear()
                throw ReplError.lostBytes
            case .ended: throw ReplError.closed
            case .timedOut:
                try Task.checkCancellation()
                return nil
            }
        }
    }

    /// Collects output for `duration` and drops it.
    private func drain(for duration: Duration) async throws {
        let deadline = clock.now.advanced(by: duration)
        while true {
            switch await channel.incoming.next(until: deadline, on: clock) {
            case .item: continue
            case .ended: throw ReplError.closed
            case .timedOut:
                try Task.checkCancellation()
                buffer.clear()
                return
            }
        }
    }

}
