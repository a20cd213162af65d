// SPDX-License-Identifier: GPL-2.0-or-later
import Synchronization

/// A first-come, first-served async lock: one holder at a time, the others wait in order
/// without blocking a thread. Serialises multi-step D-Bus sequences (a write's pieces, starting
/// and stopping discovery) that an actor alone would interleave across its awaits.
public final class AsyncGate: Sendable {
    private struct State {
        var held = false
        var nextID: UInt64 = 0
        var waiters: [(id: UInt64, continuation: Waiter)] = []
        var cancelled: Set<UInt64> = []
    }

    private enum Waiter {
        case cancellable(CheckedContinuation<Void, any Error>)
        case plain(CheckedContinuation<Void, Never>)

        func resume() {
            switch self {
            case .cancellable(let c): c.resume()
            case .plain(let c): c.resume()
            }
        }
    }

    private let state = Mutex(State())

    public init() {}

    /// Runs `body` holding the gate, in the caller's isolation. Waiting for the gate ends with
    /// CancellationError if the task is cancelled first.
    public func withLock<T>(isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> T) async throws -> T {
        try await acquire()
        defer { release() }
        return try await body()
    }

    /// The same, for clean-up that must run even in a cancelled task.
    public func withLockUncancellable<T>(isolation: isolated (any Actor)? = #isolation, _ body: () async -> T) async -> T {
        await acquireUncancellable()
        defer { release() }
        return await body()
    }

    private func acquireUncancellable() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let waiting = state.withLock { s -> Bool in
                guard s.held else {
                    s.held = true
                    return false
                }
                let id = s.nextID
                s.nextID += 1
                s.waiters.append((id, .plain(continuation)))
                return true
            }
            if !waiting { continuation.resume() }
        }
    }

    private func acquire() async throws {
        let id = state.withLock { s in
            defer { s.nextID += 1 }
            return s.nextID
        }
        // An id cancelled after the gate was granted is no longer needed.
        defer { state.withLock { _ = $0.cancelled.remove(id) } }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome = state.withLock { s -> Result<Void, any Error>? in
                    if s.cancelled.remove(id) != nil { return .failure(CancellationError()) }
                    if s.held {
                        s.waiters.append((id, .cancellable(continuation)))
                        return nil
                    }
                    s.held = true
                    return .success(())
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            let waiter = state.withLock { s -> CheckedContinuation<Void, any Error>? in
                guard let index = s.waiters.firstIndex(where: { $0.id == id }),
                    case .cancellable(let continuation) = s.waiters[index].continuation
                else {
                    s.cancelled.insert(id)
                    return nil
                }
                s.waiters.remove(at: index)
                return continuation
            }
            waiter?.resume(throwing: CancellationError())
        }
    }

    private func release() {
        let next = state.withLock { s -> Waiter? in
            if s.waiters.isEmpty {
                s.held = false
                return nil
            }
            return s.waiters.removeFirst().continuation
        }
        next?.resume()
    }
}
