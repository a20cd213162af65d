// SPDX-License-Identifier: GPL-2.0-or-later
import Synchronization

/// Who the wearer's questions belong to: glassd's own voice questions, unless something claimed
/// them (an agent session, which hears the microphone itself). One claimant at a time.
public final class EventClaim: Sendable {
    private let sink = Mutex<AsyncStream<GlassesEvent>.Continuation?>(nil)

    public init() {}

    /// What the wearer does from now on, until `release()`; nil when someone else holds the claim.
    public func claim() -> AsyncStream<GlassesEvent>? {
        let (stream, continuation) = AsyncStream.makeStream(of: GlassesEvent.self)
        let taken = sink.withLock { current -> Bool in
            guard current == nil else { return false }
            current = continuation
            return true
        }
        return taken ? stream : nil
    }

    /// Gives the wearer's questions back; the claimant's stream ends.
    public func release() {
        sink.withLock { current in
            current?.finish()
            current = nil
        }
    }

    public var isClaimed: Bool { sink.withLock { $0 != nil } }

    /// Hands `event` to the claimant, if there is one and the event is the wearer's (a question,
    /// its audio and photo, a tap, a cancel; scene frames stay with scene mode): true when taken.
    public func route(_ event: GlassesEvent) -> Bool {
        if case .sceneFrame = event { return false }
        return sink.withLock { current in
            guard let current else { return false }
            current.yield(event)
            return true
        }
    }
}
