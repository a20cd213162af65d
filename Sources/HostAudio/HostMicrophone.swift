// SPDX-License-Identifier: GPL-2.0-or-later
import Audio
import Foundation
import Logging
import Product
import Subprocess
import SystemPackage

/// `[wake] source = "host"`: the host's default microphone through the first recorder installed
/// (PipeWire's pw-record, PulseAudio's parec, ALSA's arecord), as 16 kHz mono s16 on its stdout.
/// The recorder runs under swift-subprocess, which reads its stdout without blocking the
/// cooperative pool; a recorder that ends is started again after a pause that doubles up to a minute. Where the
/// host's audio is out of reach (glassd's system unit: `HostAudioAccess`), WakeService never
/// starts it.
public enum HostMicrophone {
    static let sampleRate = 16_000

    /// The recorder's argv: the first of pw-record, parec and arecord installed (`AudioTools`).
    public static func recorderCommand() -> [String]? {
        if let pw = installedTool("pw-record") {
            return [pw, "--rate", "\(sampleRate)", "--channels", "1", "--format", "s16", "-"]
        }
        if let parec = installedTool("parec") {
            return [parec, "--rate=\(sampleRate)", "--channels=1", "--format=s16le", "--raw"]
        }
        if let arecord = installedTool("arecord") {
            return [arecord, "-q", "-t", "raw", "-f", "S16_LE", "-r", "\(sampleRate)", "-c", "1"]
        }
        return nil
    }

    /// The microphone's audio until the consumer stops reading (the recorder is then ended).
    /// `command` chooses the recorder (tests give a stand-in).
    public static func audio(
        logger: Logger, command: @escaping @Sendable () -> [String]? = recorderCommand
    ) -> AsyncStream<WakeWatch.HostAudio> {
        AsyncStream { continuation in
            let task = Task {
                var pause = Duration.seconds(1)
                while !Task.isCancelled {
                    guard let argv = command() else {
                        continuation.yield(.stopped("No recorder (pw-record, parec or arecord) is installed."))
                        continuation.finish()
                        return
                    }
                    let ran = await record(argv, continuation: continuation, logger: logger)
                    pause = ran ? .seconds(1) : min(pause * 2, .seconds(60))
                    try? await Task.sleep(for: pause)  // a backoff before trying the microphone again
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// Runs one recorder until it ends or the task is cancelled (then it gets SIGTERM, and SIGKILL
    /// if it lingers); true when it recorded for a while (a minute), so the next try need not wait
    /// long. Its stdout is read by Subprocess's own I/O, off the cooperative pool.
    private static func record(
        _ argv: [String], continuation: AsyncStream<WakeWatch.HostAudio>.Continuation, logger: Logger
    ) async -> Bool {
        // s16le at the spotter's rate: bytes to samples only, a sample split across reads kept.
        guard let converter = try? PCMConverter(input: PCMInput(sampleRate: sampleRate, bits: 16)) else {
            continuation.yield(.stopped("The microphone's audio cannot be converted."))
            return false
        }
        var options = PlatformOptions()
        options.teardownSequence = [.gracefulShutDown(allowedDurationToNextStep: .seconds(2))]
        let started = ContinuousClock.now
        var running = false
        let status: TerminationStatus
        do {
            status = try await run(
                .path(FilePath(argv[0])), arguments: Arguments(Array(argv.dropFirst())), platformOptions: options,
                input: .none, output: .sequence, error: .discarded
            ) { execution in
                running = true
                logger.info("[wake] listening on the host's microphone through \(argv[0])")
                continuation.yield(.started)
                for try await buffer in execution.standardOutput {
                    continuation.yield(.samples(converter.convert(buffer.withUnsafeBytes { Array($0) })))
                }
            }.terminationStatus
        } catch {
            if Task.isCancelled { return false }
            let what = running ? "stopped" : "could not start"
            continuation.yield(.stopped("The microphone's recorder \(argv[0]) \(what): \(error)"))
            return false
        }
        if !Task.isCancelled {
            let how =
                switch status {
                case .exited(let code): "status \(code)"
                case .signaled(let signal): "signal \(signal)"
                }
            continuation.yield(.stopped("The microphone's recorder ended (\(how))."))
            logger.notice("[wake] the host's microphone recorder \(argv[0]) ended with \(how)")
        }
        return ContinuousClock.now - started > .seconds(60)
    }
}
