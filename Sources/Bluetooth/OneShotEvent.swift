// SPDX-License-Identifier: GPL-2.0-or-later
import Synchronization

/// Something that happens once: `wait()` returns when (or if already) it has been fired.
final class OneShotEvent: Sendable {
    private struct State {
        var fired = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    init() {}

    func fire() {
        let waiters = state.withLock { s in
            s.fired = true
            defer { s.waiters.removeAll() }
            return s.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { s -> Bool in
                if s.fired { return true }
                s.waiters.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }
}

/// Stops one supervision run and lets the caller wait until it has wound down.
struct StopSignal: Sendable {
    let requested = OneShotEvent()
    let finished = OneShotEvent()

    /// Stops the run and waits until it has ended.
    func stopAndWait() async {
        requested.fire()
        await finished.wait()
    }
}
