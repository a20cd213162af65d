// SPDX-License-Identifier: GPL-2.0-or-later
import Synchronization

/// Something that happens again and again (an acknowledgement came): a waiter takes a ticket
/// first, then waits for a pulse after it, so a pulse between the two is never missed.
public final class Pulse: Sendable {
    private struct State {
        var generation: UInt64 = 0
        var nextID: UInt64 = 0
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var cancelled: Set<UInt64> = []
    }

    private let state = Mutex(State())

    public init() {}

    /// The current generation: `wait(after:)` returns once a pulse has come after it.
    public func ticket() -> UInt64 { state.withLock { $0.generation } }

    public func pulse() {
        let waiters = state.withLock { s in
            s.generation += 1
            defer { s.waiters.removeAll() }
            return Array(s.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns after the next pulse following `ticket`, or when the task is cancelled.
    public func wait(after ticket: UInt64) async {
        let id = state.withLock { s in
            defer { s.nextID += 1 }
            return s.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { s -> Bool in
                    if s.generation != ticket || s.cancelled.remove(id) != nil { return true }
                    s.waiters[id] = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { s in
                let waiter = s.waiters.removeValue(forKey: id)
                if waiter == nil { s.cancelled.insert(id) }
                return waiter
            }
            waiter?.resume()
        }
        // Cancelled after it had already returned: nothing more to keep.
        state.withLock { _ = $0.cancelled.remove(id) }
    }
}
