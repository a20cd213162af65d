// SPDX-License-Identifier: GPL-2.0-or-later
import Concurrency
import Glasses
import LinkKit
import Logging
import Synchronization

/// What glassd's app says about the speaker during one answer, shared by the session (which
/// reads the app's messages) and that answer's speaker (which waits on them).
final class SpeakerLine: Sendable {
    struct State: Sendable {
        /// The app started the speaker (true) or could not (false); nil until it says.
        var speaking: Bool?
        /// The format of what the app overhears while the speaker plays; nil when it does not listen.
        var overhearing: AudioFormat?
        /// The counters the app sent when the speaker stopped.
        var stats: String?
        /// The wearer tapped (the app stopped the speaker), or spoke over it (the host barged in).
        var cut = false
    }

    private let state = Mutex(State())
    private let changed = Pulse()

    var now: State { state.withLock { $0 } }

    func update(_ change: (inout State) -> Void) {
        state.withLock { change(&$0) }
        changed.pulse()
    }

    /// Waits (at most `timeout`) until `value` finds what it looks for in the state.
    func wait<T: Sendable, C: Clock>(
        within timeout: Duration, on clock: C, _ value: @escaping @Sendable (State) -> T?
    ) async throws -> T? where C.Duration == Duration {
        _ = try await happens(within: timeout, on: clock) {
            while !Task.isCancelled {
                let ticket = self.changed.ticket()
                if value(self.now) != nil { return }
                await self.changed.wait(after: ticket)
            }
        }
        return value(now)
    }
}

/// The speaker of glasses that have one (Halo), for one answer: glassd's app starts and stops
/// it (speakStart, speakStop), the audio goes on the link's speaker channel in packets, each
/// written when the pacer says it fits in the speaker's buffer.
actor FrameSpeaker<C: Clock>: GlassesSpeaker where C.Duration == Duration {
    nonisolated let format: SpeakerFormat
    private let channel: any ByteChannel
    private let send: @Sendable (AppMessage) async throws -> Void
    private let line: SpeakerLine
    private let clock: C
    private let logger: Logger
    private var pacer: SpeakerPacer<C>
    /// Whole samples (PCM) or whole frames (LC3) per write, at most one packet.
    private let chunk: Int
    /// How long the app has to answer speakStart and speakStop.
    static var replyTimeout: Duration { .seconds(5) }

    /// How long after the model's end the speaker is still let play: the link and the glasses'
    /// app hold audio a while before it plays (the model counts from the write), and a stop sent
    /// at the model's end cut the last 170 ms of an answer on a loaded host.
    static var tail: Duration { .milliseconds(300) }

    init(
        format: SpeakerFormat, channel: any ByteChannel, line: SpeakerLine, clock: C, logger: Logger,
        send: @escaping @Sendable (AppMessage) async throws -> Void
    ) {
        self.format = format
        self.channel = channel
        self.line = line
        self.clock = clock
        self.logger = logger
        self.send = send
        pacer = SpeakerPacer(bytesPerSecond: format.bytesPerSecond)
        let unit =
            switch format.codec {
            case .pcm16: 2
            case .lc3(let frameBytes, _): frameBytes
            }
        chunk = max(unit, channel.maxPacketSize / unit * unit)
    }

    func begin(volume: Int, listen: Bool) async throws {
        try await send(.speakStart(format, volume: UInt8(clamping: min(100, max(0, volume))), listen: listen))
        guard let started = try await line.wait(within: Self.replyTimeout, on: clock, { $0.speaking }) else {
            throw SessionError.notConnected("The glasses did not start their speaker.")
        }
        guard started else { throw SessionError.unsupported("The glasses could not start their speaker.") }
    }

    func write(_ bytes: [UInt8]) async throws {
        var rest = bytes[...]
        while !rest.isEmpty {
            let piece = Array(rest.prefix(chunk))
            let wait = pacer.delay(before: piece.count, at: clock.now)
            if wait > .zero { try await clock.sleep(for: wait) }
            // Checked after the wait too: nothing is written once the wearer stopped the speech.
            if line.now.cut { throw SpeechCut() }
            pacer.wrote(piece.count, at: clock.now)
            try await channel.write(piece)
            rest = rest.dropFirst(piece.count)
        }
        if line.now.cut { throw SpeechCut() }
    }

    func finish() async throws -> SpeakerReport {
        if let end = pacer.playsUntil?.advanced(by: Self.tail), clock.now < end, !line.now.cut {
            try await clock.sleep(until: end, tolerance: nil)
        }
        return try await end(cut: line.now.cut)
    }

    func stop() async -> SpeakerReport {
        do {
            return try await end(cut: true)
        } catch {
            return report(cut: true, device: "")
        }
    }

    private func end(cut: Bool) async throws -> SpeakerReport {
        try await send(.speakStop)
        let stats = try await line.wait(within: Self.replyTimeout, on: clock, { $0.stats }) ?? ""
        return report(cut: cut, device: stats)
    }

    private func report(cut: Bool, device: String) -> SpeakerReport {
        let played = pacer.played(at: clock.now)
        return SpeakerReport(
            written: pacer.written, played: .microseconds(played * 1_000_000 / format.bytesPerSecond), cut: cut, device: device)
    }
}
