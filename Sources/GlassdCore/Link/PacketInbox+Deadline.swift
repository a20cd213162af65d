// SPDX-License-Identifier: GPL-2.0-or-later

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
        await withTaskGroup(of: TimedIncoming.self) { group in
            group.addTask {
                if let item = await self.next() { return .item(item) }
                return Task.isCancelled ? .timedOut : .ended
            }
            group.addTask {
                try? await clock.sleep(until: deadline, tolerance: nil)
                return .timedOut
            }
            var outcome = await group.next() ?? .timedOut
            group.cancelAll()
            for await other in group {
                if case .item = other { outcome = other }
            }
            return outcome
        }
    }
}
