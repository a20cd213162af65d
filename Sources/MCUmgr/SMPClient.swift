// SPDX-License-Identifier: GPL-2.0-or-later
import Concurrency
import LinkKit

/// How an SMP client uses its channel.
public struct SMPClientOptions: Sendable, Equatable {
    /// The answer's bound when a request names none: the SDK waits 30 s for any SMP answer.
    public var responseTimeout: Duration = .seconds(30)
    /// One write (a request, or one piece of it) must be done by then, or the link is taken as gone.
    public var writeTimeout: Duration = .seconds(10)
    /// The device joins a request split across writes (Zephyr's
    /// CONFIG_MCUMGR_TRANSPORT_BT_REASSEMBLY): then a request longer than one packet goes out in
    /// packet-sized writes; without it such a request is refused (`SMPClientError.requestTooLong`).
    public var deviceReassembles = true

    public init() {}
}

/// Why an SMP exchange failed on glassd's side of the link (the device's own refusals are `SMPError`).
public enum SMPClientError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No (whole) answer before the request's deadline.
    case timeout(group: UInt16, command: UInt8)
    /// The link ended, or a write failed or did not finish in time.
    case linkLost
    /// Notifications were dropped before they were read: an answer may be missing a piece.
    case lostNotifications
    /// The answer to this request is not a well-formed frame.
    case malformedResponse(SMPFrameError)
    /// The request is longer than one packet and the device does not join pieces (or longer than
    /// an SMP frame can be).
    case requestTooLong(size: Int, limit: Int)

    public var description: String {
        switch self {
        case .timeout(let group, let command): "no answer from the glasses in time (SMP group \(group), command \(command))"
        case .linkLost: "the link to the glasses was lost during an SMP request"
        case .lostNotifications: "notifications from the glasses were lost during an SMP request"
        case .malformedResponse(let e): "malformed SMP answer: \(e)"
        case .requestTooLong(let size, let limit): "an SMP request of \(size) bytes exceeds the \(limit) the link takes"
        }
    }
}

/// Sends SMP requests over one channel (write without response + notifications) and returns
/// their answers: one request in flight, answers matched by sequence number, group and command
/// (a late answer to an abandoned request is skipped), an answer joined from as many
/// notifications as its header's length needs.
public actor SMPClient<C: Clock> where C.Duration == Duration {
    let channel: any ByteChannel
    let clock: C
    public let options: SMPClientOptions
    /// An actor alone would let a second request start while the first awaits its answer.
    private let exchange = AsyncGate()
    private var sequence: UInt8

    /// `firstSequence`: random by default, so that a new client on the same link is unlikely to
    /// take an old client's late answer for its own.
    public init(channel: any ByteChannel, clock: C, options: SMPClientOptions = SMPClientOptions(), firstSequence: UInt8? = nil) {
        self.channel = channel
        self.clock = clock
        self.options = options
        self.sequence = firstSequence ?? UInt8.random(in: .min ... .max)
    }

    /// The longest frame one request may be on this link: what one packet carries, or (when the
    /// device joins pieces) what the SMP header's length field allows. The upload's chunk size
    /// takes the smaller of this and the device's buffer (`MCUmgrParameters`).
    public nonisolated var maxRequestSize: Int {
        channel.framing == .stream || options.deviceReassembles
            ? SMPHeader.size + Int(UInt16.max) : max(SMPHeader.size, channel.maxPacketSize)
    }

    /// Sends `payload` to `group`/`command` and returns the answer's frame once whole; throws the
    /// device's `SMPError` when the answer reports one. `timeout` defaults to the options' own.
    public func request(
        _ operation: SMPOperation, group: UInt16, command: UInt8, payload: CBOR = .map([]), timeout: Duration? = nil
    ) async throws -> SMPFrame {
        try await exchange.withLock {
            let seq = sequence
            sequence &+= 1
            let header = SMPHeader(operation: operation, length: 0, group: group, sequence: seq, command: command)
            let bytes: [UInt8]
            do {
                bytes = try SMPFrame(header: header, payload: payload).encoded()
            } catch {
                throw SMPClientError.requestTooLong(size: payload.encoded.count + SMPHeader.size, limit: maxRequestSize)
            }
            guard bytes.count <= maxRequestSize else {
                throw SMPClientError.requestTooLong(size: bytes.count, limit: maxRequestSize)
            }
            let deadline = clock.now.advanced(by: timeout ?? options.responseTimeout)
            try await send(bytes)
            let answer = try await response(to: header, until: deadline)
            if let error = answer.error { throw error }
            return answer
        }
    }

    // MARK: Link

    /// Writes the request whole, or in packet-sized pieces on a packet channel (the device joins them).
    private func send(_ bytes: [UInt8]) async throws {
        let size = max(1, channel.maxPacketSize)
        let pieces =
            channel.framing == .stream || bytes.count <= size
            ? [bytes[...]] : stride(from: 0, to: bytes.count, by: size).map { bytes[$0..<min($0 + size, bytes.count)] }
        for piece in pieces {
            let channel = self.channel
            let data = Array(piece)
            do {
                try await withDeadline(after: options.writeTimeout, on: clock) {
                    try await channel.write(data)
                    try Task.checkCancellation()  // a write that ends after its deadline is still late
                }
            } catch {
                try Task.checkCancellation()
                throw SMPClientError.linkLost
            }
        }
    }

    /// Reads notifications until the answer to `request` is whole. A frame that answers something
    /// else (another sequence number, group or command, or a request echoed back) is skipped.
    private func response(to request: SMPHeader, until deadline: C.Instant) async throws -> SMPFrame {
        var pending: [UInt8] = []
        while true {
            switch await channel.incoming.next(until: deadline, on: clock) {
            case .item(.packet(let packet)):
                pending += packet
            case .item(.overflow):
                throw SMPClientError.lostNotifications
            case .ended:
                throw SMPClientError.linkLost
            case .timedOut:
                try Task.checkCancellation()
                throw SMPClientError.timeout(group: request.group, command: request.command)
            }
            guard pending.count >= SMPHeader.size else { continue }
            let header: SMPHeader
            do {
                header = try SMPHeader.decode(pending)
            } catch {
                pending = []  // not the start of a frame: wait for one that is
                continue
            }
            let total = SMPHeader.size + Int(header.length)
            guard pending.count >= total else { continue }
            // A notification carries the end of at most one frame: bytes past it are dropped.
            let frame = Array(pending.prefix(total))
            pending = []
            guard header.sequence == request.sequence, header.group == request.group,
                header.command == request.command, header.operation == request.operation.response
            else { continue }
            do {
                return try SMPFrame.decode(frame)
            } catch {
                throw SMPClientError.malformedResponse(error)
            }
        }
    }
}
