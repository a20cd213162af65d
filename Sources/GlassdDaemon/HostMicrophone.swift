// SPDX-License-Identifier: GPL-2.0-or-later
import Audio
import Foundation
import Logging
import Product
import Synchronization

/// `[wake] source = "host"`: the host's default microphone through the first recorder installed
/// (PipeWire's pw-record, PulseAudio's parec, ALSA's arecord), as 16 kHz mono s16 on its stdout.
/// The pipe is read on a thread of its own (a blocking read, never on the cooperative pool); a
/// recorder that ends is started again after a pause that doubles up to a minute. Where the
/// host's audio is out of reach (glassd's system unit: `HostAudioAccess`), WakeService never
/// starts it.
enum HostMicrophone {
    static let sampleRate = 16_000

    /// The recorder's argv: the first of pw-record, parec and arecord installed (`AudioTools`).
    static func recorderCommand() -> [String]? {
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
    static func audio(logger: Logger) -> AsyncStream<WakeWatch.HostAudio> {
        AsyncStream { continuation in
            let task = Task {
                var pause = Duration.seconds(1)
                while !Task.isCancelled {
                    guard let argv = recorderCommand() else {
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

    /// Runs one recorder until it ends or the task is cancelled; true when it recorded for a while
    /// (a minute), so the next try need not wait long.
    private static func record(
        _ argv: [String], continuation: AsyncStream<WakeWatch.HostAudio>.Continuation, logger: Logger
    ) async -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: argv[0])
        process.arguments = Array(argv.dropFirst())
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardInput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            continuation.yield(.stopped("The microphone's recorder \(argv[0]) could not start: \(error)"))
            return false
        }
        logger.info("[wake] listening on the host's microphone through \(argv[0])")
        continuation.yield(.started)
        let started = ContinuousClock.now
        let reader = pipe.fileHandleForReading
        let status: Int32 = await withTaskCancellationHandler {
            await withCheckedContinuation { (done: CheckedContinuation<Int32, Never>) in
                let thread = Thread {
                    // s16le at the spotter's rate: bytes to samples only, a sample split across reads kept.
                    if let converter = try? PCMConverter(input: PCMInput(sampleRate: sampleRate, bits: 16)) {
                        while case let data = reader.availableData, !data.isEmpty {
                            continuation.yield(.samples(converter.convert(Array(data))))
                        }
                    } else {
                        process.terminate()
                    }
                    process.waitUntilExit()
                    done.resume(returning: process.terminationStatus)
                }
                thread.name = "host microphone"
                thread.start()
            }
        } onCancel: {
            process.terminate()
        }
        try? reader.close()
        if !Task.isCancelled {
            continuation.yield(.stopped("The microphone's recorder ended (status \(status))."))
            logger.notice("[wake] the host's microphone recorder \(argv[0]) ended with status \(status)")
        }
        return ContinuousClock.now - started > .seconds(60)
    }
}
