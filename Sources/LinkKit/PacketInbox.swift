// SPDX-License-Identifier: GPL-2.0-or-later
import Synchronization

/// What a channel's reader gets, in order.
public enum Incoming: Sendable, Equatable {
    case packet([UInt8])
    /// `dropped` packets were lost here because the reader fell behind; what follows is newer.
    /// The reader must resynchronise (a byte stream has a gap).
    case overflow(dropped: Int)
}

/// The notifications of one channel, waiting for their one reader: bounded, so a chatty device
/// cannot grow the daemon without limit, and honest about it: when full, the oldest packet goes
/// and the reader is told how many went (`Incoming.overflow`) before it sees newer ones.
public final class PacketInbox: AsyncSequence, Sendable {
    public typealias Element = Incoming

    private struct State {
        var packets: [[UInt8]] = []
        var head = 0
        var dropped = 0
        var finished = false
        var waiter: CheckedContinuation<Incoming?, Never>?
        var waiterCancelled = false
        var count: Int { packets.count - head }

        mutating func take() -> Incoming? {
            if dropped > 0 {
                defer { dropped = 0 }
                return .overflow(dropped: dropped)
            }
            guard head < packets.count else { return nil }
            let packet = packets[head]
            head += 1
            if head >= 64 && head * 2 >= packets.count {
                packets.removeFirst(head)
                head = 0
            }
            return .packet(packet)
        }
    }

    /// Packets kept for a reader that lags (about 256 KiB of 253-byte packets by default).
    public let capacity: Int
    private let state = Mutex(State())

    public init(capacity: Int = 1024) {
        self.capacity = Swift.max(1, capacity)
    }

    /// Adds a packet (producer side). Ignored after `finish()`.
    public func push(_ packet: [UInt8]) {
        let waiter = state.withLock { s -> CheckedContinuation<Incoming?, Never>? in
            guard !s.finished else { return nil }
            if let waiter = s.waiter {
                s.waiter = nil
                return waiter
            }
            if s.count >= capacity {
                s.head += 1
                s.dropped += 1
            }
            s.packets.append(packet)
            return nil
        }
        waiter?.resume(returning: .packet(packet))
    }

    /// No more packets: the reader gets what is buffered, then the end.
    public func finish() {
        let waiter = state.withLock { s -> CheckedContinuation<Incoming?, Never>? in
            s.finished = true
            defer { s.waiter = nil }
            return s.waiter
        }
        waiter?.resume(returning: nil)
    }

    /// The next packet or overflow report; nil at the end, or when the reading task is cancelled.
    public func next() async -> Incoming? {
        state.withLock { $0.waiterCancelled = false }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Incoming?, Never>) in
                let now = state.withLock { s -> Incoming?? in
                    if let item = s.take() { return .some(item) }
                    if s.finished || s.waiterCancelled { return .some(nil) }
                    s.waiter = continuation
                    return .none
                }
                if case .some(let item) = now { continuation.resume(returning: item) }
            }
        } onCancel: {
            let waiter = state.withLock { s -> CheckedContinuation<Incoming?, Never>? in
                s.waiterCancelled = true
                defer { s.waiter = nil }
                return s.waiter
            }
            waiter?.resume(returning: nil)
        }
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        let inbox: PacketInbox
        public mutating func next() async -> Incoming? { await inbox.next() }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(inbox: self) }
}
