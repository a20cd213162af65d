// SPDX-License-Identifier: GPL-2.0-or-later
import Concurrency
import Foundation
import Logging
import Subprocess
import Synchronization
import SystemPackage

/// `[agent] speak`: the agent's speech played on the host's default audio output, through the
/// first player found (PipeWire's pw-cat, PulseAudio's pacat, ALSA's aplay) reading raw s16 on its
/// stdin. A writer task runs the player under swift-subprocess and feeds it what waits; the player
/// lives across bursts of speech until the format changes or `finish()`. A player that takes
/// nothing holds up that writer, never the caller, and what waits is bounded (the oldest goes
/// first, counted in the log).
public final class AgentSpeaker: Sendable {
    /// Speech comes in bursts faster than it plays, so some must wait; a player that stalls must
    /// not make it wait without end. 4096 chunks is over a minute of the usual 10-20 ms pieces.
    public static let defaultMaxPendingChunks = 4096
    /// About 90 s of 24 kHz mono s16 (45 s of 48 kHz stereo): past this the player is stuck.
    public static let defaultMaxPendingBytes = 8 << 20
    /// A player plays what it holds (a pipe's worth, about a second) and exits once its input
    /// ends; one still there after this is stuck, and is ended so the next can start.
    public static let defaultExitTimeout = Duration.seconds(30)

    private let command: [String]?
    private let queue: SpeechQueue
    private let maxPendingChunks: Int
    private let maxPendingBytes: Int
    private let exitTimeout: Duration
    private let logger: Logger

    /// `command` with the rate and channels appended decides the player (tests); nil: the first one installed.
    public init(
        command: [String]? = nil, logger: Logger, maxPendingChunks: Int = defaultMaxPendingChunks,
        maxPendingBytes: Int = defaultMaxPendingBytes, exitTimeout: Duration = defaultExitTimeout
    ) {
        self.command = command
        self.logger = logger
        self.maxPendingChunks = max(1, maxPendingChunks)
        self.maxPendingBytes = maxPendingBytes
        self.exitTimeout = exitTimeout
        queue = SpeechQueue(logger: logger)
    }

    /// The writer holds the queue, not the speaker: a speaker released mid-speech still plays what
    /// it was given, then its player ends.
    deinit { queue.finish() }

    /// Chunks waiting for the player, and how many were dropped so far (tests).
    var backlog: (chunks: Int, bytes: Int, dropped: Int) { queue.backlog }

    /// The player's argv for this format: the first of pw-cat, pacat and aplay installed (`AudioTools`).
    static func defaultCommand(sampleRate: Int, channels: Int) -> [String]? {
        if let pw = installedTool("pw-cat") {
            return [pw, "--playback", "--format", "s16", "--rate", "\(sampleRate)", "--channels", "\(channels)", "-"]
        }
        if let pacat = installedTool("pacat") {
            return [pacat, "--playback", "--format=s16le", "--rate=\(sampleRate)", "--channels=\(channels)", "--raw"]
        }
        if let aplay = installedTool("aplay") {
            return [aplay, "-q", "-t", "raw", "-f", "S16_LE", "-r", "\(sampleRate)", "-c", "\(channels)"]
        }
        return nil
    }

    public func play(_ pcm: [UInt8], sampleRate: Int, channels: Int) {
        guard !pcm.isEmpty, (8_000...96_000).contains(sampleRate), (1...2).contains(channels) else { return }
        let (startWriter, firstDrop) = queue.add(
            pcm, format: [sampleRate, channels], maxChunks: maxPendingChunks, maxBytes: maxPendingBytes)
        if firstDrop {
            logger.notice("the agent's speech player is behind: dropping the oldest speech (over \(maxPendingChunks) pieces or \(maxPendingBytes) bytes waiting)")
        }
        guard startWriter else { return }
        // Started from a synchronous caller; it ends by itself once nothing waits and no player runs.
        Task { [queue, command, exitTimeout, logger] in
            await Self.write(queue, command: command, exitTimeout: exitTimeout, logger: logger)
        }
    }

    /// Ends the player once it has what waits (it plays that, then exits).
    public func finish() { queue.finish() }

    /// Plays what waits, one player per run of one format, until nothing waits and no player runs.
    private static func write(_ queue: SpeechQueue, command: [String]?, exitTimeout: Duration, logger: Logger) async {
        while let first = await queue.next(format: nil) {
            let format = first.format
            let argv = command.map { $0 + format.map(String.init) } ?? defaultCommand(sampleRate: format[0], channels: format[1])
            guard let argv, let executable = argv.first else {
                logger.notice("[agent] speak is on, but no audio player (pw-cat, pacat or aplay) is installed")
                continue
            }
            var started = false
            do {
                _ = try await run(
                    .path(FilePath(executable)), arguments: Arguments(Array(argv.dropFirst())), input: .inputWriter,
                    output: .sequence, error: .currentStandardError
                ) { execution in
                    started = true
                    // Its stdout (it prints nothing) ends when it exits, or when it closes it itself:
                    // then the wait below is not bounded.
                    let exited = OneShotEvent()
                    async let drained: Void = {
                        _ = try? await execution.standardOutput.reduce(0) { count, _ in count + 1 }
                        exited.fire()
                    }()
                    let input = execution.standardInputWriter
                    var pcm: [UInt8]? = first.pcm
                    while let chunk = pcm {
                        _ = try await input.write(chunk)
                        pcm = await queue.next(format: format)?.pcm
                    }
                    // Another format waits, or the session ended: this player plays what it has and exits.
                    try await input.finish()
                    do {
                        try await withDeadline(after: exitTimeout, on: ContinuousClock()) {
                            await exited.wait()
                            try Task.checkCancellation()
                        }
                    } catch is DeadlinePassed {
                        logger.notice("the agent's speech player \(executable) did not exit after its speech: ending it")
                        await execution.teardown(using: [.gracefulShutDown(allowedDurationToNextStep: .seconds(2))])
                    }
                    await drained
                }
            } catch {
                if started {
                    logger.info("the agent's speech player stopped: \(error)")
                } else {
                    logger.notice("cannot start the audio player \(executable): \(error)")
                }
            }
        }
    }
}

/// Speech waiting for the player, shared by the speaker and its writer.
private final class SpeechQueue: Sendable {
    private struct State {
        var chunks: [(pcm: [UInt8], format: [Int])] = []
        var first = 0
        var bytes = 0
        /// A writer task runs (and maybe a player).
        var writing = false
        /// The running player ends once it has what waits.
        var finishing = false
        /// Dropped since the writer last caught up, for one log line when it does.
        var dropped = 0
        var droppedTotal = 0

        var count: Int { chunks.count - first }

        mutating func removeFirst() -> (pcm: [UInt8], format: [Int]) {
            let chunk = chunks[first]
            chunks[first].pcm = []
            first += 1
            bytes -= chunk.pcm.count
            if first > 64 && first * 2 > chunks.count {
                chunks.removeFirst(first)
                first = 0
            }
            return chunk
        }
    }

    private let state = Mutex(State())
    private let arrived = Pulse()
    private let logger: Logger

    init(logger: Logger) { self.logger = logger }

    var backlog: (chunks: Int, bytes: Int, dropped: Int) {
        state.withLock { ($0.count, $0.bytes, $0.droppedTotal) }
    }

    /// Queues a chunk, dropping the oldest past the bounds; whether a writer must start, and
    /// whether this began a run of drops.
    func add(_ pcm: [UInt8], format: [Int], maxChunks: Int, maxBytes: Int) -> (startWriter: Bool, firstDrop: Bool) {
        let result = state.withLock { s -> (Bool, Bool) in
            s.chunks.append((pcm, format))
            s.bytes += pcm.count
            var firstDrop = false
            // The newest chunk always stays: what is dropped is what is furthest behind.
            while s.count > 1 && (s.count > maxChunks || s.bytes > maxBytes) {
                _ = s.removeFirst()
                firstDrop = firstDrop || s.dropped == 0
                s.dropped += 1
                s.droppedTotal += 1
            }
            defer { s.writing = true }
            return (!s.writing, firstDrop)
        }
        arrived.pulse()
        return result
    }

    func finish() {
        state.withLock { s in
            if s.writing { s.finishing = true }
        }
        arrived.pulse()
    }

    /// The next chunk for a player of `format` (nil: for a new player, of any format), waiting for
    /// one while a player runs. Nil ends that player (another format waits, or `finish()`), or,
    /// asked for a new player, the writer (nothing waits).
    func next(format: [Int]?) async -> (pcm: [UInt8], format: [Int])? {
        while true {
            let ticket = arrived.ticket()
            let (chunk, caughtUp, done) = state.withLock { s -> ((pcm: [UInt8], format: [Int])?, Int, Bool) in
                if s.count > 0 {
                    guard format == nil || s.chunks[s.first].format == format else { return (nil, 0, true) }
                    return (s.removeFirst(), 0, false)
                }
                defer { s.dropped = 0 }
                if format == nil || s.finishing {
                    // No player, or it is to end: the writer ends when no player remains.
                    if format == nil {
                        s.writing = false
                        s.finishing = false
                    }
                    return (nil, s.dropped, true)
                }
                return (nil, s.dropped, false)
            }
            if caughtUp > 0 { logger.notice("the agent's speech player caught up; \(caughtUp) pieces of speech were dropped") }
            if let chunk { return chunk }
            if done || Task.isCancelled { return nil }
            await arrived.wait(after: ticket)
        }
    }
}
