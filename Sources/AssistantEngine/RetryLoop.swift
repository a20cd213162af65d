// SPDX-License-Identifier: GPL-2.0-or-later

/// What one attempt's failure means for the next.
enum AttemptFailure: Error {
    case final(AssistantError)
    case retry(AssistantError, after: Duration?)
}

extension RetryPolicy {
    /// Runs `attempt` with the time left, and again after each failure worth retrying (after the
    /// server's Retry-After, else the backoff) until it succeeds, fails for good, runs out of
    /// attempts, or the next try would start past `timeout`. Cancellation (seen after an attempt,
    /// or thrown by the sleep) ends it with `cancelled`.
    func run<T>(
        within timeout: Duration, timedOut: AssistantError, cancelled: AssistantError,
        sleep: @Sendable (Duration) async throws -> Void,
        _ attempt: (Duration) async throws(AttemptFailure) -> T
    ) async throws(AssistantError) -> T {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        var tries = 0
        while true {
            let remaining = deadline - clock.now
            guard remaining > .zero else { throw timedOut }
            let failure: AssistantError
            let after: Duration?
            do throws(AttemptFailure) {
                let result = try await attempt(remaining)
                // A body stream ends quietly when its reader is cancelled, so what reads as a
                // whole answer may be a cut one: the cancellation decides.
                guard !Task.isCancelled else { throw AttemptFailure.final(cancelled) }
                return result
            } catch {
                switch error {
                case .final(let error): throw error
                case .retry(let error, let wait): (failure, after) = (error, wait)
                }
            }
            tries += 1
            guard tries < maxAttempts else { throw failure }
            let wait = after ?? backoff(after: tries - 1)
            guard clock.now + wait < deadline else { throw failure }
            do {
                try await sleep(wait)
            } catch {
                throw cancelled
            }
        }
    }
}
