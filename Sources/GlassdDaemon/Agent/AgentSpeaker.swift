// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation
import Logging
import Synchronization

/// `[agent] speak`: the agent's speech played on the host's default audio output, through the
/// first player found (PipeWire's pw-cat, PulseAudio's pacat, ALSA's aplay) reading raw s16 from
/// a pipe. One writer on a serial queue drains what waits: a full pipe blocks that writer, never
/// the caller, and what waits is bounded (the oldest goes first, counted in the log).
final class AgentSpeaker: Sendable {
    private struct Player {
        var process: Process
        var input: FileHandle
        var format: [Int]
    }

    /// Speech waiting for the player, oldest first from `first`.
    private struct Pending {
        var chunks: [(pcm: [UInt8], format: [Int])] = []
        var first = 0
        var bytes = 0
        var draining = false
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

    /// Speech comes in bursts faster than it plays, so some must wait; a player that stalls must
    /// not make it wait without end. 4096 chunks is over a minute of the usual 10-20 ms pieces.
    static let defaultMaxPendingChunks = 4096
    /// About 90 s of 24 kHz mono s16 (45 s of 48 kHz stereo): past this the player is stuck.
    static let defaultMaxPendingBytes = 8 << 20

    private let command: [String]?
    private let queue = DispatchQueue(label: "glassd.agent-speaker")
    private let player = Mutex<Player?>(nil)
    private let pending = Mutex(Pending())
    private let maxPendingChunks: Int
    private let maxPendingBytes: Int
    private let logger: Logger

    /// `command` with the rate and channels appended decides the player (tests); nil: the first one installed.
    init(
        command: [String]? = nil, logger: Logger, maxPendingChunks: Int = defaultMaxPendingChunks,
        maxPendingBytes: Int = defaultMaxPendingBytes
    ) {
        self.command = command
        self.logger = logger
        self.maxPendingChunks = max(1, maxPendingChunks)
        self.maxPendingBytes = maxPendingBytes
    }

    /// Chunks waiting for the player, and how many were dropped so far (tests).
    var backlog: (chunks: Int, bytes: Int, dropped: Int) {
        pending.withLock { ($0.count, $0.bytes, $0.droppedTotal) }
    }

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

    func play(_ pcm: [UInt8], sampleRate: Int, channels: Int) {
        guard !pcm.isEmpty, (8_000...96_000).contains(sampleRate), (1...2).contains(channels) else { return }
        let (startWriter, firstDrop) = pending.withLock { p -> (Bool, Bool) in
            p.chunks.append((pcm, [sampleRate, channels]))
            p.bytes += pcm.count
            var firstDrop = false
            // The newest chunk always stays: what is dropped is what is furthest behind.
            while p.count > 1 && (p.count > maxPendingChunks || p.bytes > maxPendingBytes) {
                _ = p.removeFirst()
                firstDrop = firstDrop || p.dropped == 0
                p.dropped += 1
                p.droppedTotal += 1
            }
            defer { p.draining = true }
            return (!p.draining, firstDrop)
        }
        if firstDrop {
            logger.notice("the agent's speech player is behind: dropping the oldest speech (over \(maxPendingChunks) pieces or \(maxPendingBytes) bytes waiting)")
        }
        if startWriter { queue.async { [self] in drain() } }
    }

    /// Writes what waits until nothing does; a new writer starts with the next `play`.
    private func drain() {
        while true {
            let next = pending.withLock { p -> (pcm: [UInt8], format: [Int])? in
                guard p.count > 0 else {
                    p.draining = false
                    return nil
                }
                return p.removeFirst()
            }
            guard let (pcm, format) = next else { break }
            guard let input = playerInput(format: format) else { continue }
            do {
                try input.write(contentsOf: Data(pcm))
            } catch {
                logger.info("the agent's speech player stopped: \(error)")
                stopPlayer()
            }
        }
        let dropped = pending.withLock { p in
            defer { p.dropped = 0 }
            return p.dropped
        }
        if dropped > 0 { logger.notice("the agent's speech player caught up; \(dropped) pieces of speech were dropped") }
    }

    /// Ends the player (it plays what it has, then exits).
    func finish() {
        queue.async { [self] in stopPlayer() }
    }

    private func playerInput(format: [Int]) -> FileHandle? {
        if let running = player.withLock({ $0 }), running.format == format, running.process.isRunning { return running.input }
        stopPlayer()
        let argv = command.map { $0 + format.map(String.init) } ?? Self.defaultCommand(sampleRate: format[0], channels: format[1])
        guard let argv, let executable = argv.first else {
            logger.notice("[agent] speak is on, but no audio player (pw-cat, pacat or aplay) is installed")
            return nil
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = Array(argv.dropFirst())
        let pipe = Pipe()
        process.standardInput = pipe
        process.standardOutput = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            logger.notice("cannot start the audio player \(executable): \(error)")
            return nil
        }
        player.withLock { $0 = Player(process: process, input: pipe.fileHandleForWriting, format: format) }
        return pipe.fileHandleForWriting
    }

    private func stopPlayer() {
        guard let old = player.withLock({ p -> Player? in defer { p = nil }; return p }) else { return }
        try? old.input.close()
    }
}
