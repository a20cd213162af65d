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
            let changed = await withTaskGroup(of: Bool.self) { group in
                group.addTask {
                    await changes.wait(after: ticket)
                    return true
                }
                group.addTask {
                    try? await clock.sleep(until: deadline, tolerance: nil)
                    return false
                }
                let first = await group.next() ?? false
                group.cancelAll()
                return first
            }
            try Task.checkCancellation()
            if !changed {
                let last = current
                return condition(last) ? last : nil
            }
        }
    }
}
