// SPDX-License-Identifier: GPL-2.0-or-later
import Synchronization

/// Runs `body` (which waits for an event) and fails with the text `failure` gives if the event
/// has not come within `timeout`: a guard against a hang, not a timing assertion.
func within<T: Sendable>(
    _ timeout: Duration, failure: @escaping @Sendable () async -> String, _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: timeout)
            throw TestFailure(await failure())
        }
        defer { group.cancelAll() }
        return try await group.next()!
    }
}

/// The result of `task`, or nil if it has not ended within `timeout`. Unlike `within`, this
/// returns even when the task ignores cancellation (the hang a test is looking for): the task is
/// then left behind, cancelled, and the caller reports it.
func result<T: Sendable, F: Error>(of task: Task<T, F>, within timeout: Duration) async -> Result<T, F>? {
    let first = FirstResult<Result<T, F>?>()
    return await withCheckedContinuation { continuation in
        first.set(continuation)
        let timer = Task {
            try? await Task.sleep(for: timeout)
            if first.resume(nil) { task.cancel() }
        }
        Task {
            first.resume(await task.result)
            timer.cancel()
        }
    }
}

/// One continuation, resumed by whichever of several racers comes first.
private final class FirstResult<T: Sendable>: Sendable {
    private let state = Mutex<(continuation: CheckedContinuation<T, Never>?, done: Bool)>((nil, false))

    func set(_ continuation: CheckedContinuation<T, Never>) {
        state.withLock { $0.continuation = continuation }
    }

    /// Whether this call was the first.
    @discardableResult
    func resume(_ value: T) -> Bool {
        let continuation = state.withLock { s -> CheckedContinuation<T, Never>? in
            guard !s.done else { return nil }
            s.done = true
            defer { s.continuation = nil }
            return s.continuation
        }
        continuation?.resume(returning: value)
        return continuation != nil
    }
}
