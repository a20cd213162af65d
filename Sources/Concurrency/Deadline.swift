// SPDX-License-Identifier: GPL-2.0-or-later

/// The deadline of `withDeadline` came before its work finished.
public struct DeadlinePassed: Error, Sendable, Equatable, CustomStringConvertible {
    public init() {}
    public var description: String { "the deadline passed" }
}

/// Runs `work` until `deadline` on `clock` (a test's manual clock as well as a real one). When the
/// deadline comes first, `work` is cancelled and awaited, and DeadlinePassed is thrown. A value
/// `work` returns is never dropped, even one it returns after that cancellation (an item it had
/// taken as the timer fired), so work that returns when cancelled without having its result (a
/// wait for a pulse, say) must throw instead: `try Task.checkCancellation()` after the wait.
/// Cancelling the caller cancels `work`, and what it throws (CancellationError) is rethrown.
public func withDeadline<C: Clock, T: Sendable>(
    _ deadline: C.Instant, on clock: C, _ work: @escaping @Sendable () async throws -> T
) async throws -> T {
    let outcome = await withTaskGroup(of: DeadlineRace<T>.self) { group -> Result<T, any Error> in
        group.addTask {
            do {
                return .finished(.success(try await work()))
            } catch {
                return .finished(.failure(error))
            }
        }
        group.addTask {
            do {
                try await clock.sleep(until: deadline, tolerance: nil)
            } catch {
                return .timerStopped
            }
            // A clock that returns early when cancelled has not reached the deadline.
            return Task.isCancelled ? .timerStopped : .deadline
        }
        var passed = false
        var outcome: Result<T, any Error> = .failure(DeadlinePassed())
        for await event in group {
            switch event {
            case .finished(let result):
                outcome = result
                group.cancelAll()  // the timer
            case .deadline:
                passed = true
                group.cancelAll()  // the work, awaited by this loop
            case .timerStopped:
                break
            }
        }
        if passed, case .failure = outcome { return .failure(DeadlinePassed()) }
        return outcome
    }
    return try outcome.get()
}

/// `withDeadline` with the deadline `timeout` from now on `clock`.
public func withDeadline<C: Clock, T: Sendable>(
    after timeout: C.Duration, on clock: C, _ work: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withDeadline(clock.now.advanced(by: timeout), on: clock, work)
}

private enum DeadlineRace<T: Sendable>: Sendable {
    case finished(Result<T, any Error>)
    case deadline
    case timerStopped
}
