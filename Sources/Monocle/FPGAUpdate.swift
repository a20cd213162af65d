// SPDX-License-Identifier: GPL-2.0-or-later
import Crypto
import Foundation
import Glasses

/// Where an FPGA update is.
public enum FPGAPhase: Sendable, Equatable {
    case erasing
    case writing
    case verifying
}

/// Progress of an FPGA update: `bytes` of `total` done in `phase`.
public struct FPGAProgress: Sendable, Equatable {
    public var bytes: Int
    public var total: Int
    public var phase: FPGAPhase

    public init(bytes: Int, total: Int, phase: FPGAPhase) {
        self.bytes = bytes
        self.total = total
        self.phase = phase
    }
}

/// Why an FPGA update stopped. In every case `done` was not written: the FPGA still boots from
/// its internal image.
public enum FPGAUpdateError: Error, Sendable, Equatable, CustomStringConvertible {
    case emptyImage
    /// The image would run into the `done` marker.
    case imageTooLarge(Int, limit: Int)
    /// The REPL failed (link closed, no banner, …) or kept failing after the resends.
    case repl(ReplError)
    /// A step kept getting a reply that was not the expected form.
    case unexpectedReply(step: String, reply: String)
    /// The device's write count is not where the host is: bytes went missing or were doubled.
    case outOfStep(expected: Int, device: Int)
    /// The flash read back differs from the image in this range.
    case verifyMismatch(from: Int, to: Int)
    case cancelled

    public var description: String {
        switch self {
        case .emptyImage: "the FPGA image is empty"
        case .imageTooLarge(let n, let limit): "the FPGA image has \(n) bytes, more than \(limit)"
        case .repl(let error): "FPGA update: \(error)"
        case .unexpectedReply(let step, let reply): "FPGA update: unexpected reply to \(step): \(reply.debugDescription)"
        case .outOfStep(let expected, let device): "FPGA update: the glasses wrote \(device) bytes, expected \(expected)"
        case .verifyMismatch(let from, let to): "FPGA update: the flash differs from the image in bytes \(from)..<\(to)"
        case .cancelled: "FPGA update cancelled"
        }
    }
}

/// Timing and limits of an FPGA update.
public struct FPGAUpdateSettings: Sendable {
    /// Erasing 109 flash pages.
    public var eraseTimeout: Duration = .seconds(30)
    /// One chunk written.
    public var writeTimeout: Duration = .seconds(5)
    /// One span hashed on the device (and the padding written).
    public var verifyTimeout: Duration = .seconds(20)
    /// Bytes hashed per verification command: a mismatch is located to this span.
    public var verifySpan = 16 * 1024
    /// Sends of one command before giving up (a resend after a timeout, lost bytes, a traceback
    /// or a garbled reply; the device's count makes a repeated write harmless).
    public var attempts = 3

    public init() {}
}

/// What an update did.
public struct FPGAUpdateReport: Sendable, Equatable {
    public var imageBytes: Int
    /// Chunks sent once each: REPL write commands, or data-channel frames (windowed).
    public var writeCommands: Int
    /// Commands or frames sent again.
    public var resends: Int
    /// REPL round trips of the update (erase, writes, padding, readback, done, reset).
    public var roundTrips: Int

    public init(imageBytes: Int, writeCommands: Int, resends: Int, roundTrips: Int) {
        self.imageBytes = imageBytes
        self.writeCommands = writeCommands
        self.resends = resends
        self.roundTrips = roundTrips
    }
}

/// The FPGA image update over the raw REPL (monocle-protocol.md §6), checked end to end: erase,
/// chunked writes, the rest padded with 0xFF, the whole area hashed back on the device and
/// compared, and only then `done` and the reset. Unlike the apps, a timeout never marks a partial
/// image valid. The caller enters the REPL first, and after the reset reconnects and reads the
/// version (`FPGACommands.version` or the session's check).
public enum FPGAUpdate {
    public static func run<C: Clock>(
        image: [UInt8], repl: RawRepl<C>, settings: FPGAUpdateSettings = FPGAUpdateSettings(),
        progress: @Sendable (FPGAProgress) -> Void = { _ in }
    ) async throws(FPGAUpdateError) -> FPGAUpdateReport where C.Duration == Duration {
        try check(image)
        var run = Exchange(repl: repl, attempts: settings.attempts)
        let before = await repl.roundTrips
        try await erase(image, &run, settings, progress)

        let chunk = FPGACommands.bytesPerChunk(maxCommandBytes: repl.settings.maxCommandBytes)
        var offset = 0
        var writes = 0
        progress(FPGAProgress(bytes: 0, total: image.count, phase: .writing))
        while offset < image.count {
            let next = min(offset + chunk, image.count)
            writes += 1
            _ = try await run.exchange(
                FPGACommands.write(image[offset..<next], at: offset), step: "the write at \(offset)",
                timeout: settings.writeTimeout
            ) { reply in count(reply, expected: next) }
            offset = next
            progress(FPGAProgress(bytes: offset, total: image.count, phase: .writing))
        }
        try await finish(image, &run, settings, progress)
        return FPGAUpdateReport(
            imageBytes: image.count, writeCommands: writes, resends: run.resends, roundTrips: await repl.roundTrips - before)
    }

    static func check(_ image: [UInt8]) throws(FPGAUpdateError) {
        guard !image.isEmpty else { throw .emptyImage }
        guard image.count <= FPGACommands.doneOffset else { throw .imageTooLarge(image.count, limit: FPGACommands.doneOffset) }
    }

    static func erase<C: Clock>(
        _ image: [UInt8], _ run: inout Exchange<C>, _ settings: FPGAUpdateSettings, _ progress: (FPGAProgress) -> Void
    ) async throws(FPGAUpdateError) {
        progress(FPGAProgress(bytes: 0, total: image.count, phase: .erasing))
        _ = try await run.exchange(FPGACommands.prepare, step: "the erase", timeout: settings.eraseTimeout) { reply in
            reply == "erased" ? .done : .retry
        }
    }

    /// Pads, verifies the whole area, marks it done and resets: after the image is written.
    static func finish<C: Clock>(
        _ image: [UInt8], _ run: inout Exchange<C>, _ settings: FPGAUpdateSettings, _ progress: (FPGAProgress) -> Void
    ) async throws(FPGAUpdateError) {
        let end = FPGACommands.doneOffset
        if image.count < end {
            _ = try await run.exchange(FPGACommands.pad, step: "the padding", timeout: settings.verifyTimeout) { reply in
                count(reply, expected: end)
            }
        }

        // The whole area up to the marker, so stale bytes beyond a short image are caught too.
        var start = 0
        progress(FPGAProgress(bytes: 0, total: end, phase: .verifying))
        while start < end {
            let stop = min(start + max(1, settings.verifySpan), end)
            var hash = SHA256()
            if start < image.count { hash.update(data: image[start..<min(stop, image.count)]) }
            if stop > image.count { hash.update(data: [UInt8](repeating: 0xFF, count: stop - max(start, image.count))) }
            let expected = hex(hash.finalize())
            let reply = try await run.exchange(
                FPGACommands.digest(from: start, to: stop), step: "the readback at \(start)", timeout: settings.verifyTimeout
            ) { reply in isDigest(reply) ? .done : .retry }
            guard reply == expected else { throw .verifyMismatch(from: start, to: stop) }
            start = stop
            progress(FPGAProgress(bytes: start, total: end, phase: .verifying))
        }

        _ = try await run.exchange(FPGACommands.markDone, step: "the done marker", timeout: settings.writeTimeout) { reply in
            count(reply, expected: end)
        }
        do {
            try await run.repl.start(FPGACommands.reset)
        } catch ReplError.closed {
            // The reset may cut the link before the acknowledgement arrives.
        } catch is CancellationError {
            throw .cancelled
        } catch let error as ReplError {
            throw .repl(error)
        } catch {
            throw .repl(.closed)
        }
    }

    /// Reads the FPGA version register (after the reset and a new raw REPL).
    public static func version<C: Clock>(repl: RawRepl<C>) async throws -> String where C.Duration == Duration {
        let reply = try await repl.execute(FPGACommands.version)
        return String(reply.unicodeScalars.filter { $0.value >= 0x20 && $0.value < 0x7F })
    }

    enum Verdict: Sendable, Equatable {
        case done
        case retry
        case outOfStep(expected: Int, device: Int)
    }

    /// A reply that is the device's write count: the expected one, another (out of step), or garbage.
    static func count(_ reply: String, expected: Int) -> Verdict {
        guard let n = Int(reply) else { return .retry }
        return n == expected ? .done : .outOfStep(expected: expected, device: n)
    }

    static func isDigest(_ reply: String) -> Bool {
        reply.utf8.count == 64 && reply.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }
    }

    static func hex(_ digest: some Sequence<UInt8>) -> String {
        digest.map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }

    /// Sends commands with bounded resends.
    struct Exchange<C: Clock> where C.Duration == Duration {
        let repl: RawRepl<C>
        let attempts: Int
        var resends = 0

        /// Runs `code` until `judge` accepts its trimmed stdout; returns it. A timeout or lost
        /// bytes re-enter the REPL first (a late reply must not pass for the next one's).
        mutating func exchange(
            _ code: String, step: String, timeout: Duration, judge: (String) -> Verdict
        ) async throws(FPGAUpdateError) -> String {
            var last: FPGAUpdateError = .unexpectedReply(step: step, reply: "")
            for attempt in 0..<max(1, attempts) {
                if attempt > 0 { resends += 1 }
                do {
                    let reply = try await repl.execute(code, timeout: timeout).trimmingASCIIWhitespace()
                    switch judge(reply) {
                    case .done: return reply
                    case .outOfStep(let expected, let device):
                        throw FPGAUpdateError.outOfStep(expected: expected, device: device)
                    case .retry: last = .unexpectedReply(step: step, reply: reply)
                    }
                } catch let error as FPGAUpdateError {
                    throw error
                } catch is CancellationError {
                    throw .cancelled
                } catch let error as ReplError {
                    switch error {
                    case .closed, .forbiddenByte, .commandTooLong, .noBanner: throw .repl(error)
                    case .traceback: last = .repl(error)
                    case .timeout, .lostBytes, .unexpectedReply:
                        last = .repl(error)
                        do { try await repl.enter() } catch is CancellationError { throw .cancelled } catch {
                            throw .repl((error as? ReplError) ?? .closed)
                        }
                    }
                } catch {
                    throw .repl(.closed)
                }
            }
            throw last
        }
    }
}

extension String {
    fileprivate func trimmingASCIIWhitespace() -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !($0 == " " || $0 == "\r" || $0 == "\n" || $0 == "\t") }),
            let last = scalars.lastIndex(where: { !($0 == " " || $0 == "\r" || $0 == "\n" || $0 == "\t") })
        else { return "" }
        return String(scalars[first...last])
    }
}
