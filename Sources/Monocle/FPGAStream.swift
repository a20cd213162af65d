// SPDX-License-Identifier: GPL-2.0-or-later
import LinkKit

/// Settings of the windowed transfer.
public struct FPGAStreamSettings: Sendable {
    /// Chunks in flight at first: enough to keep a link of 15 ms connection events busy while an
    /// acknowledgement comes back (8 measured 2.4× faster than 3 under Scripts/bench-update's model).
    public var window = 8
    /// The window after losses: MicroPython's scheduler queue holds 4 callbacks and drops the
    /// rest, so a link that delivers more at once loses chunks; each loss halves the window, down
    /// to this.
    public var minimumWindow = 3
    /// Silence after which the chunks from the last acknowledged offset are sent again.
    public var ackTimeout: Duration = .seconds(2)
    /// Such silences in a row before giving up.
    public var silences = 4

    public init() {}
}

extension FPGAUpdate {
    /// The faster method: the erase over the REPL, then a small receiver started over the REPL
    /// (`FPGACommands.receiver`) takes the image as binary chunks on the data channel, `window`
    /// at a time, acknowledged cumulatively; a lost chunk makes the device drop what follows and
    /// the host resends from the acknowledged offset. Then the same readback, `done` and reset as
    /// `run`. `data` is the data channel, with no other reader meanwhile (the scripts are stopped
    /// while the REPL is entered).
    public static func runWindowed<C: Clock>(
        image: [UInt8], repl: RawRepl<C>, data: any ByteChannel, clock: C,
        settings: FPGAUpdateSettings = FPGAUpdateSettings(), stream: FPGAStreamSettings = FPGAStreamSettings(),
        progress: @Sendable (FPGAProgress) -> Void = { _ in }
    ) async throws(FPGAUpdateError) -> FPGAUpdateReport where C.Duration == Duration {
        try check(image)
        var run = Exchange(repl: repl, attempts: settings.attempts)
        let before = await repl.roundTrips
        try await erase(image, &run, settings, progress)
        try await mapped { try await repl.start(FPGACommands.receiver(size: image.count)) }

        let sent = try await sendWindowed(image, data: data, clock: clock, stream: stream) { bytes in
            progress(FPGAProgress(bytes: bytes, total: image.count, phase: .writing))
        }
        // The receiver has returned to the REPL and printed its count: enter again to skip that.
        try await mapped { try await repl.enter() }
        try await finish(image, &run, settings, progress)
        return FPGAUpdateReport(
            imageBytes: image.count, writeCommands: sent.frames, resends: run.resends + sent.resends,
            roundTrips: await repl.roundTrips - before)
    }

    /// Sends `bytes` to the receiver started on the device (DeviceScripts/glassd_receiver.py):
    /// binary chunks, `window` in flight, acknowledged cumulatively; a lost chunk makes the device
    /// drop what follows and the host resends from the acknowledged offset (halving the window).
    /// `acknowledged` gets each new count. On failure the receiver is told to stop.
    static func sendWindowed<C: Clock>(
        _ image: [UInt8], data: any ByteChannel, clock: C, stream: FPGAStreamSettings, acknowledged: (Int) -> Void
    ) async throws(FPGAUpdateError) -> (frames: Int, resends: Int) where C.Duration == Duration {
        let payload = data.maxPacketSize - FPGACommands.dataHeader
        guard payload > 0 else { throw .repl(.commandTooLong(FPGACommands.dataHeader, limit: data.maxPacketSize)) }
        var acked = 0
        var next = 0
        var frames = 0
        var resends = 0
        var silent = 0
        // The offset last gone back to: the device answers each chunk it drops with the same
        // count, and one resend from there is enough.
        var wentBack = -1
        var window = max(1, stream.window)
        acknowledged(0)
        do throws(FPGAUpdateError) {
            while acked < image.count {
                while next < image.count && next - acked < window * payload {
                    let end = min(next + payload, image.count)
                    let frame = FPGACommands.dataFrame(image[next..<end], at: next)
                    try await mapped { try await data.write(frame) }
                    frames += 1
                    next = end
                }
                switch await data.incoming.next(until: clock.now.advanced(by: stream.ackTimeout), on: clock) {
                case .item(.packet(let bytes)):
                    if bytes.starts(with: FPGACommands.ackPrefix) {
                        guard let n = Int(String(decoding: bytes.dropFirst(4), as: UTF8.self)), n <= image.count else {
                            throw .unexpectedReply(step: "the receiver", reply: String(decoding: bytes, as: UTF8.self))
                        }
                        if n > acked {
                            acked = n
                            silent = 0
                            acknowledged(acked)
                        } else if n == acked && next > acked && wentBack != acked {
                            next = acked
                            wentBack = acked
                            resends += 1
                            window = max(min(stream.minimumWindow, window), window / 2)
                        }
                    } else if bytes.starts(with: FPGACommands.errorPrefix) {
                        throw .unexpectedReply(step: "the receiver", reply: String(decoding: bytes, as: UTF8.self))
                    }
                // Anything else on the channel is not for this transfer.
                case .item(.overflow): continue
                case .ended: throw .repl(.closed)
                case .timedOut:
                    if Task.isCancelled { throw .cancelled }
                    silent += 1
                    guard silent <= stream.silences else { throw .repl(.timeout("the FPGA receiver")) }
                    next = acked
                    wentBack = -1
                    resends += 1
                    window = max(min(stream.minimumWindow, window), window / 2)
                }
            }
        } catch {
            // Give the REPL back at once rather than after the receiver's idle timeout.
            try? await data.write(FPGACommands.stopPrefix)
            throw error
        }
        return (frames, resends)
    }

    static func mapped(_ body: () async throws -> Void) async throws(FPGAUpdateError) {
        do {
            try await body()
        } catch is CancellationError {
            throw .cancelled
        } catch let error as ReplError {
            throw .repl(error)
        } catch {
            throw .repl(.closed)
        }
    }
}
