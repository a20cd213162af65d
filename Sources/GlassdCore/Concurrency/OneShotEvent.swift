// SPDX-License-Identifier: GPL-2.0-or-later
import Synchronization

/// Something that happens once: `wait()` returns when (or if already) it has been fired, or when
/// the waiting task is cancelled.
public final class OneShotEvent: Sendable {
    private struct State {
        var fired = false
        var nextID: UInt64 = 0
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var cancelled: Set<UInt64> = []
    }

    private let state = Mutex(State())

    public init() {}

    public func fire() {
        let waiters = state.withLock { s in
            s.fired = true
            defer { s.waiters.removeAll() }
            return Array(s.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    public func wait() async {
        let id = state.withLock { s in
            defer { s.nextID += 1 }
            return s.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { s -> Bool in
                    if s.fired || s.cancelled.remove(id) != nil { return true }
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
    }
}
