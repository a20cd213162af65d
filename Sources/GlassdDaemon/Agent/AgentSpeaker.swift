// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation
import Logging
import Synchronization

/// `[agent] speak`: the agent's speech played on the host's default audio output, through the
/// first player found (PipeWire's pw-cat, PulseAudio's pacat, ALSA's aplay) reading raw s16 from
/// a pipe. Writes go through one serial queue: a full pipe blocks that queue, never the caller.
final class AgentSpeaker: Sendable {
    private struct Player {
        var process: Process
        var input: FileHandle
        var format: [Int]
    }

    private let command: [String]?
    private let queue = DispatchQueue(label: "glassd.agent-speaker")
    private let player = Mutex<Player?>(nil)
    private let logger: Logger

    /// `command` with the rate and channels appended decides the player (tests); nil: the first one installed.
    init(command: [String]? = nil, logger: Logger) {
        self.command = command
        self.logger = logger
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
        queue.async { [self] in
            guard let input = playerInput(format: [sampleRate, channels]) else { return }
            do {
                try input.write(contentsOf: Data(pcm))
            } catch {
                logger.info("the agent's speech player stopped: \(error)")
                stopPlayer()
            }
        }
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
