// SPDX-License-Identifier: GPL-2.0-or-later

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
