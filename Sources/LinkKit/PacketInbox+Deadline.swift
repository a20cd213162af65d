// SPDX-License-Identifier: GPL-2.0-or-later
import Concurrency

/// What a reader with a deadline gets.
public enum TimedIncoming: Sendable, Equatable {
    case item(Incoming)
    /// The inbox ended (the link is gone).
    case ended
    case timedOut
}

extension PacketInbox {
    /// The next item, unless `deadline` on `clock` comes first. One that arrives as the timer
    /// fires is still returned, never lost.
    public func next<C: Clock>(until deadline: C.Instant, on clock: C) async -> TimedIncoming {
        do {
            let item = try await withDeadline(deadline, on: clock) { () async throws -> Incoming? in
                guard let item = await self.next() else {
                    try Task.checkCancellation()  // no item because the wait was cancelled: not the end
                    return nil
                }
                return item
            }
            return item.map(TimedIncoming.item) ?? .ended
        } catch {
            return .timedOut  // the deadline, or the caller was cancelled
        }
    }
}
