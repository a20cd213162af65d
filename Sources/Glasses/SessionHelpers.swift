// SPDX-License-Identifier: GPL-2.0-or-later

/// Whether `event` happens within `timeout` on `clock` (it is cancelled if not).
public func happens<C: Clock>(
    within timeout: Duration, on clock: C, _ event: @escaping @Sendable () async -> Void
) async throws -> Bool where C.Duration == Duration {
    try await withThrowingTaskGroup(of: Bool.self) { group in
        group.addTask {
            await event()
            return true
        }
        group.addTask {
            try await clock.sleep(for: timeout)
            return false
        }
        let first = try await group.next() ?? false
        group.cancelAll()
        return first
    }
}

/// An error's text as a reason people read: "the link closed" → "The link closed."
public func sentence(_ text: String) -> String {
    guard let first = text.first else { return text }
    let capitalised = first.uppercased() + text.dropFirst()
    return capitalised.hasSuffix(".") ? capitalised : capitalised + "."
}
