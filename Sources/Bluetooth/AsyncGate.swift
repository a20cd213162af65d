// SPDX-License-Identifier: GPL-2.0-or-later
import Synchronization

/// A first-come, first-served async lock: one holder at a time, the others wait in order
/// without blocking a thread. Serialises multi-step D-Bus sequences (a write's pieces, starting
/// and stopping discovery) that an actor alone would interleave across its awaits.
final class AsyncGate: Sendable {
    private struct State {
        var held = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    init() {}

    /// Runs `body` holding the gate, in the caller's isolation.
    func withLock<T>(isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> T) async rethrows -> T {
        await acquire()
        defer { release() }
        return try await body()
    }

    private func acquire() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let granted = state.withLock { s -> Bool in
                if s.held {
                    s.waiters.append(continuation)
                    return false
                }
                s.held = true
                return true
            }
            if granted { continuation.resume() }
        }
    }

    private func release() {
        let next = state.withLock { s -> CheckedContinuation<Void, Never>? in
            if s.waiters.isEmpty {
                s.held = false
                return nil
            }
            return s.waiters.removeFirst()
        }
        next?.resume()
    }
}
