// SPDX-License-Identifier: GPL-2.0-or-later
import Concurrency
import Synchronization

/// A clock that moves only when the test says so: sleepers wake when `advance` passes their
/// deadline. The test learns that something sleeps through `sleeping()`, an event, not a delay.
public final class ManualClock: Clock, Sendable {
    public struct Instant: InstantProtocol {
        public var offset: Duration
        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        public static func < (a: Instant, b: Instant) -> Bool { a.offset < b.offset }
    }

    private struct Sleeper {
        var deadline: Instant
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now = Instant(offset: .zero)
        var sleepers: [UInt64: Sleeper] = [:]
        var cancelled: Set<UInt64> = []
        var nextID: UInt64 = 0
    }

    private let state = Mutex(State())
    private let changed = Pulse()

    public init() {}

    public var now: Instant { state.withLock { $0.now } }
    public var minimumResolution: Duration { .zero }

    public func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        let id = state.withLock { s in
            defer { s.nextID += 1 }
            return s.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome = state.withLock { s -> Result<Void, any Error>? in
                    if s.cancelled.remove(id) != nil { return .failure(CancellationError()) }
                    if deadline <= s.now { return .success(()) }
                    s.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) } else { changed.pulse() }
            }
        } onCancel: {
            let sleeper = state.withLock { s in
                let sleeper = s.sleepers.removeValue(forKey: id)
                if sleeper == nil { s.cancelled.insert(id) }
                return sleeper
            }
            sleeper?.continuation.resume(throwing: CancellationError())
            changed.pulse()
        }
    }

    /// Moves time on, waking everyone whose deadline has come.
    public func advance(by duration: Duration) {
        let due = state.withLock { s -> [CheckedContinuation<Void, any Error>] in
            s.now = s.now.advanced(by: duration)
            let due = s.sleepers.filter { $0.value.deadline <= s.now }
            for id in due.keys { s.sleepers.removeValue(forKey: id) }
            return due.values.map(\.continuation)
        }
        for continuation in due { continuation.resume() }
    }

    /// Moves time to `instant` (if it is ahead).
    public func advance(to instant: Instant) {
        let step = now.duration(to: instant)
        if step > .zero { advance(by: step) }
    }

    /// The earliest deadline less than `horizon` away, once some task sleeps until one; now, if
    /// the waiting task is cancelled (its test timed out: it must end, not spin).
    public func nextDeadline(within horizon: Duration) async -> Instant {
        while !Task.isCancelled {
            let ticket = changed.ticket()
            let found = state.withLock { s in
                s.sleepers.values.map(\.deadline).filter { s.now.duration(to: $0) < horizon }.min()
            }
            if let found { return found }
            await changed.wait(after: ticket)
        }
        return now
    }

    /// Returns once at least `count` tasks sleep on this clock, or the waiting task is cancelled.
    public func sleeping(_ count: Int = 1) async {
        while !Task.isCancelled {
            let ticket = changed.ticket()
            if state.withLock({ $0.sleepers.count }) >= count { return }
            await changed.wait(after: ticket)
        }
    }
}
