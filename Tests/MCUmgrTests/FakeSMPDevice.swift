// SPDX-License-Identifier: GPL-2.0-or-later
import LinkKit
import MCUmgr
import Synchronization

/// An SMP server behind one in-memory packet channel: it joins the writes of a request (as
/// Zephyr's reassembly does), hands the whole frame to the test's `answer`, and sends what that
/// returns as notifications, each already cut as the test wants.
final class FakeSMPDevice: ByteChannel {
    struct State {
        var pending: [UInt8] = []
        var writes: [[UInt8]] = []
        var requests: [SMPFrame] = []
    }

    let maxPacketSize: Int
    let framing = ChannelFraming.packets
    let incoming: PacketInbox
    let state = Mutex(State())
    /// The notifications that answer a request (none: the device stays silent).
    let answer: @Sendable (SMPFrame) -> [[UInt8]]

    init(maxPacketSize: Int = 244, inboxCapacity: Int = 1024, answer: @escaping @Sendable (SMPFrame) -> [[UInt8]]) {
        self.maxPacketSize = maxPacketSize
        self.incoming = PacketInbox(capacity: inboxCapacity)
        self.answer = answer
    }

    var writes: [[UInt8]] { state.withLock { $0.writes } }
    var requests: [SMPFrame] { state.withLock { $0.requests } }

    func write(_ bytes: [UInt8]) async throws {
        guard bytes.count <= maxPacketSize else { throw ChannelError.tooLong(size: bytes.count, limit: maxPacketSize) }
        let frame = try state.withLock { s -> SMPFrame? in
            s.writes.append(bytes)
            s.pending += bytes
            guard s.pending.count >= SMPHeader.size else { return nil }
            let header = try SMPHeader.decode(s.pending)
            guard s.pending.count >= SMPHeader.size + Int(header.length) else { return nil }
            defer { s.pending = [] }
            let frame = try SMPFrame.decode(s.pending)
            s.requests.append(frame)
            return frame
        }
        guard let frame else { return }
        for notification in answer(frame) { incoming.push(notification) }
    }

    /// The answer frame to `request` with `payload`, cut into `pieces` notifications.
    static func reply(
        to request: SMPFrame, _ payload: CBOR, sequence: UInt8? = nil, group: UInt16? = nil, pieces: Int = 1
    ) -> [[UInt8]] {
        let header = SMPHeader(
            operation: request.header.operation.response ?? .readResponse, length: 0,
            group: group ?? request.header.group, sequence: sequence ?? request.header.sequence,
            command: request.header.command)
        let bytes = try! SMPFrame(header: header, payload: payload).encoded()
        let size = (bytes.count + pieces - 1) / pieces
        return stride(from: 0, to: bytes.count, by: size).map { Array(bytes[$0..<min($0 + size, bytes.count)]) }
    }
}
