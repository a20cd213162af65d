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
        /// The one reader waiting, by the number of its wait.
        var waiter: (wait: UInt64, continuation: CheckedContinuation<Incoming?, Never>)?
        var waits: UInt64 = 0
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
                return waiter.continuation
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
            return s.waiter?.continuation
        }
        waiter?.resume(returning: nil)
    }

    /// The next packet or overflow report; nil at the end, when the reading task is cancelled,
    /// or when another reader starts waiting: there is one reader, and a second one takes its
    /// place (a link's session torn down late, on the same channel as the next one's), so no
    /// wait is left for ever and no cancelled reader ends the next one's.
    public func next() async -> Incoming? {
        let wait = state.withLock { s in
            s.waits += 1
            return s.waits
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Incoming?, Never>) in
                let (now, displaced) = state.withLock { s -> (Incoming??, CheckedContinuation<Incoming?, Never>?) in
                    if let item = s.take() { return (.some(item), nil) }
                    // Cancelled before this wait was put down: its handler found nothing to end.
                    if s.finished || Task.isCancelled { return (.some(nil), nil) }
                    let displaced = s.waiter?.continuation
                    s.waiter = (wait, continuation)
                    return (.none, displaced)
                }
                displaced?.resume(returning: nil)
                if case .some(let item) = now { continuation.resume(returning: item) }
            }
        } onCancel: {
            let waiter = state.withLock { s -> CheckedContinuation<Incoming?, Never>? in
                guard let waiter = s.waiter, waiter.wait == wait else { return nil }
                s.waiter = nil
                return waiter.continuation
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
