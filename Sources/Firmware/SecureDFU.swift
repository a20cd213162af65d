// SPDX-License-Identifier: GPL-2.0-or-later
import Concurrency
import LinkKit
import Synchronization

/// Sends an application update to a Nordic Secure DFU bootloader: the init packet, then the image
/// in objects of the bootloader's maxSize, each checked by CRC before it is executed. Resumes from
/// what Select reports, so a dropped link costs at most one object. Data is never sent unless the
/// init packet was executed first in the same run.
public actor SecureDFU<C: Clock> where C.Duration == Duration {
    /// Requests out; its `incoming` carries the control point's notifications.
    let control: any ByteChannel
    /// Object bytes out (write without response).
    let packet: any ByteChannel
    let clock: C
    public let settings: DFUSettings
    public private(set) var phase = DFUPhase.setup
    /// Object bytes written in this run, for measuring what a resume saved.
    public private(set) var bytesSent = 0
    /// Set from any context (a progress callback included), read at object boundaries.
    private let stopRequest = Atomic<Bool>(false)
    private var stopRequested: Bool { stopRequest.load(ordering: .relaxed) }
    /// Packet writes since the bootloader last reset its receipt counter (Set PRN, Create).
    private var writesSinceReset = 0

    public init(control: any ByteChannel, packet: any ByteChannel, clock: C, settings: DFUSettings = DFUSettings()) {
        self.control = control
        self.packet = packet
        self.clock = clock
        self.settings = settings
    }

    /// Asks the transfer to stop at the next object boundary (it then throws `DFUError.stopped`),
    /// leaving the bootloader ready for a resume. Cancelling the task instead stops at once.
    public nonisolated func stop() { stopRequest.store(true, ordering: .relaxed) }

    public func update(_ package: DFUPackage, progress: @Sendable (DFUProgress) -> Void = { _ in }) async throws {
        try await update(initPacket: package.initPacket, image: package.image, progress: progress)
    }

    /// Sends `initPacket` and `image`; returns once the bootloader executed the last object.
    public func update(
        initPacket: [UInt8], image: [UInt8], progress: @Sendable (DFUProgress) -> Void = { _ in }
    ) async throws {
        guard !initPacket.isEmpty, !image.isEmpty else { throw DFUError.unsupported("an empty init packet or image") }
        phase = .setup
        try await expectDone(.setPRN(settings.packetReceiptInterval))
        writesSinceReset = 0
        do {
            try await sendInitPacket(initPacket, fresh: false)
            try await sendImage(image, progress: progress)
        } catch is ProgressMismatch {
            // What the bootloader holds is not a prefix of this image: creating the init packet
            // again makes it start the image from zero.
            try await sendInitPacket(initPacket, fresh: true)
            try await sendImage(image, progress: progress)
        }
    }

    // MARK: Init packet

    private func sendInitPacket(_ dat: [UInt8], fresh: Bool) async throws {
        phase = .initPacket
        if stopRequested { throw DFUError.stopped }
        let selected = try await select(.command)
        guard dat.count <= selected.maxSize else {
            throw DFUError.unsupported("a \(dat.count)-byte init packet exceeds the bootloader's \(selected.maxSize)")
        }
        let held = selected.offset
        if !fresh, held > 0, held <= dat.count, selected.crc == ZlibCRC32.checksum(dat[..<held]) {
            // Part or all of this init packet is there. Executing a complete one again is harmless,
            // and creating it again would throw away the image's progress.
            if try await stream(dat, held..<dat.count), try await checksumMatches(dat, through: dat.count),
                case .done = try await request(.execute)
            {
                return
            }
        }
        for _ in 0..<settings.objectAttempts {
            try await expectDone(.create(.command, size: UInt32(dat.count)))
            writesSinceReset = 0
            guard try await stream(dat, 0..<dat.count), try await checksumMatches(dat, through: dat.count) else {
                continue
            }
            try await expectDone(.execute)
            return
        }
        throw DFUError.crcMismatch(.initPacket, attempts: settings.objectAttempts)
    }

    // MARK: Image

    private struct ProgressMismatch: Error {}

    private func sendImage(_ image: [UInt8], progress: @Sendable (DFUProgress) -> Void) async throws {
        let selected = try await select(.data)
        let maxSize = selected.maxSize
        guard maxSize > 0 else { throw DFUError.unsupported("the bootloader reports a data object size of 0") }
        let held = selected.offset
        let matches = held <= image.count && selected.crc == ZlibCRC32.checksum(image[..<held])
        let intoObject = held % maxSize
        var start = held - intoObject
        var resumeAt: Int?
        switch (held, matches, intoObject) {
        case (0, _, _): start = 0
        case (_, false, 0): throw ProgressMismatch()
        case (_, false, _) where held > image.count: throw ProgressMismatch()
        case (_, false, _): break  // the current object is damaged: create it again
        case (_, true, 0):
            // The last object may be complete but not executed; 0x08 means it already was.
            phase = .image(object: held / maxSize - 1)
            switch try await request(.execute) {
            case .done, .failed(_, .operationNotPermitted, _): break
            case let other: throw Self.failure(other, expected: .execute)
            }
        case (_, true, _): resumeAt = held
        }
        progress(
            DFUProgress(
                phase: .image(object: start / maxSize), bytesDone: start, totalBytes: image.count, atBoundary: true))
        while start < image.count {
            phase = .image(object: start / maxSize)
            if stopRequested { throw DFUError.stopped }
            let end = min(start + maxSize, image.count)
            try await sendObject(image, start..<end, resumeAt: resumeAt, isLast: end == image.count, progress: progress)
            resumeAt = nil
            start = end
            progress(DFUProgress(phase: phase, bytesDone: end, totalBytes: image.count, atBoundary: true))
        }
    }

    private func sendObject(
        _ image: [UInt8], _ object: Range<Int>, resumeAt: Int?, isLast: Bool,
        progress: @Sendable (DFUProgress) -> Void
    ) async throws {
        var resumeAt = resumeAt
        for _ in 0..<settings.objectAttempts {
            let from: Int
            if let resume = resumeAt {
                from = resume
                resumeAt = nil
            } else {
                try await expectDone(.create(.data, size: UInt32(object.count)))
                writesSinceReset = 0
                from = object.lowerBound
            }
            let wasComplete = from == object.upperBound
            let streamed = try await stream(image, from..<object.upperBound) { done in
                progress(DFUProgress(phase: self.phase, bytesDone: done, totalBytes: image.count, atBoundary: false))
            }
            guard streamed, try await checksumMatches(image, through: object.upperBound) else { continue }
            let timeout = isLast ? settings.finalExecuteTimeout : settings.responseTimeout
            switch try await request(.execute, timeout: timeout) {
            case .done: return
            // Everything was there before this run: it had been executed.
            case .failed(_, .operationNotPermitted, _) where wasComplete: return
            case let other: throw Self.failure(other, expected: .execute)
            }
        }
        throw DFUError.crcMismatch(phase, attempts: settings.objectAttempts)
    }

    // MARK: Streaming

    /// Writes `bytes[range]` to the packet channel in packet-sized writes, consuming the packet
    /// receipt notifications as flow control: false as soon as one reports a wrong offset or CRC.
    private func stream(
        _ bytes: [UInt8], _ range: Range<Int>, progress: (Int) -> Void = { _ in }
    ) async throws -> Bool {
        let interval = Int(settings.packetReceiptInterval)
        let size = max(1, packet.maxPacketSize)
        var crc = ZlibCRC32(bytes[..<range.lowerBound])
        var offset = range.lowerBound
        while offset < range.upperBound {
            let end = min(offset + size, range.upperBound)
            try await send(packet, Array(bytes[offset..<end]))
            crc.update(bytes[offset..<end])
            bytesSent += end - offset
            writesSinceReset += 1
            offset = end
            guard interval > 0, writesSinceReset % interval == 0 else { continue }
            let receipt = try await nextResponse(until: clock.now.advanced(by: settings.responseTimeout))
            guard case .checksum(let at, let sum) = receipt else {
                throw DFUError.unexpected(expected: .calculateChecksum, got: receipt)
            }
            guard Int(at) == offset, sum == crc.value else { return false }
            progress(offset)
        }
        return true
    }

    private func checksumMatches(_ bytes: [UInt8], through end: Int) async throws -> Bool {
        switch try await request(.calculateChecksum) {
        case .checksum(let offset, let crc): return Int(offset) == end && crc == ZlibCRC32.checksum(bytes[..<end])
        case let other: throw Self.failure(other, expected: .calculateChecksum)
        }
    }

    // MARK: Requests

    private func select(_ type: DFUObjectType) async throws -> (maxSize: Int, offset: Int, crc: UInt32) {
        switch try await request(.select(type)) {
        case .selected(let maxSize, let offset, let crc): return (Int(maxSize), Int(offset), crc)
        case let other: throw Self.failure(other, expected: .select)
        }
    }

    private func expectDone(_ request: DFURequest) async throws {
        let response = try await self.request(request)
        guard response == .done(request.opcode) else { throw Self.failure(response, expected: request.opcode) }
    }

    private static func failure(_ response: DFUResponse, expected: DFUOpcode) -> DFUError {
        if case .failed(let op, let result, let extended) = response, op == expected {
            return .remote(op, result, extended)
        }
        return .unexpected(expected: expected, got: response)
    }

    /// Writes `request` and returns the answer to it.
    private func request(_ request: DFURequest, timeout: Duration? = nil) async throws -> DFUResponse {
        try await send(control, request.encoded)
        let deadline = clock.now.advanced(by: timeout ?? settings.responseTimeout)
        while true {
            let response = try await nextResponse(until: deadline)
            // A late packet receipt notification is no answer to anything else.
            if case .checksum = response, request.opcode != .calculateChecksum { continue }
            guard response.opcode == request.opcode else {
                throw DFUError.unexpected(expected: request.opcode, got: response)
            }
            return response
        }
    }

    // MARK: Link

    /// One write, bounded in time; a failed write means the link went.
    private func send(_ channel: any ByteChannel, _ bytes: [UInt8]) async throws {
        do {
            try await withDeadline(after: settings.writeTimeout, on: clock) {
                try await channel.write(bytes)
                try Task.checkCancellation()  // a write that ends after its deadline is still late
            }
        } catch is DeadlinePassed {
            throw DFUError.timeout(phase)
        } catch {
            try Task.checkCancellation()
            throw DFUError.linkLost
        }
    }

    private func nextResponse(until deadline: C.Instant) async throws -> DFUResponse {
        switch await control.incoming.next(until: deadline, on: clock) {
        case .item(.packet(let bytes)):
            do {
                return try DFUResponse.decode(bytes)
            } catch {
                throw DFUError.malformed(error)
            }
        case .item(.overflow): throw DFUError.lostNotifications
        case .ended: throw DFUError.linkLost
        case .timedOut:
            try Task.checkCancellation()
            throw DFUError.timeout(phase)
        }
    }

}
