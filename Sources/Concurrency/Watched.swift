// SPDX-License-Identifier: GPL-2.0-or-later
import Synchronization

/// A value that changes, with waiters for the change they need (a session back in `ready`).
public final class Watched<Value: Sendable>: Sendable {
    private let value: Mutex<Value>
    private let changes = Pulse()

    public init(_ initial: Value) {
        value = Mutex(initial)
    }

    public var current: Value { value.withLock { $0 } }

    public func set(_ new: Value) {
        value.withLock { $0 = new }
        changes.pulse()
    }

    /// The current value, then every change (changes in quick succession may come as the newest
    /// one only), until the consumer stops.
    public func values() -> AsyncStream<Value> {
        let changes = self.changes
        return AsyncStream { continuation in
            let task = Task {
                var ticket = changes.ticket()
                continuation.yield(self.current)
                while !Task.isCancelled {
                    await changes.wait(after: ticket)
                    ticket = changes.ticket()
                    continuation.yield(self.current)
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// The first value, from now on, for which `condition` holds; nil if none came by `timeout`.
    /// Throws CancellationError.
    public func wait<C: Clock>(
        timeout: C.Duration, clock: C, until condition: (Value) -> Bool
    ) async throws -> Value? {
        let deadline = clock.now.advanced(by: timeout)
        while true {
            let ticket = changes.ticket()
            let now = current
            if condition(now) { return now }
            try Task.checkCancellation()
            let changes = self.changes
            let changed: Bool
            do {
                try await withDeadline(deadline, on: clock) {
                    await changes.wait(after: ticket)
                    try Task.checkCancellation()  // cancelled, not changed
                }
                changed = true
            } catch {
                changed = false  // the deadline; a cancelled caller throws just below
            }
            try Task.checkCancellation()
            if !changed {
                let last = current
                return condition(last) ? last : nil
            }
        }
    }
}
