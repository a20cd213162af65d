// SPDX-License-Identifier: GPL-2.0-or-later
import Concurrency

/// Whether `event` happens within `timeout` on `clock` (it is cancelled if not).
public func happens<C: Clock>(
    within timeout: Duration, on clock: C, _ event: @escaping @Sendable () async -> Void
) async throws -> Bool where C.Duration == Duration {
    do {
        try await withDeadline(after: timeout, on: clock) {
            await event()
            try Task.checkCancellation()  // cancelled, so it did not happen
        }
        return true
    } catch is DeadlinePassed {
        return false
    }
}

/// An error's text as a reason people read: "the link closed" → "The link closed."
public func sentence(_ text: String) -> String {
    guard let first = text.first else { return text }
    let capitalised = first.uppercased() + text.dropFirst()
    return capitalised.hasSuffix(".") ? capitalised : capitalised + "."
}
