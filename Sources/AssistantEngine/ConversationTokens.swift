// SPDX-License-Identifier: GPL-2.0-or-later
import Synchronization

/// The tokens the current conversation has used, as the server reported them: read from the
/// store once, then kept in step with each stored turn, so a question never sums the
/// conversation again. Every change is told to `observe`, in order (it is called under the lock,
/// so it must only hand the number on, never call back in).
final class ConversationTokens: Sendable {
    private struct State {
        /// nil until loaded.
        var used: Int64?
        /// Bumped by every change, so a load that raced one is not installed over it.
        var generation = 0
    }

    private let store: any ConversationStore
    private let observe: @Sendable (Int64) -> Void
    private let state = Mutex(State())

    init(store: any ConversationStore, observe: @escaping @Sendable (Int64) -> Void) {
        self.store = store
        self.observe = observe
    }

    /// The current conversation's count.
    func used() async throws -> Int64 {
        let (cached, generation) = state.withLock { ($0.used, $0.generation) }
        if let cached { return cached }
        let stored = try await store.tokensUsed()
        return state.withLock { state in
            if state.generation == generation, state.used == nil { state.used = stored }
            return state.used ?? stored
        }
    }

    /// A turn was stored with `usage`; with `newConversation` the count starts over from it.
    func add(_ usage: TokenUsage?, newConversation: Bool) {
        state.withLock { state in
            state.generation += 1
            if newConversation {
                state.used = usage?.total ?? 0
            } else if let total = usage?.total, let used = state.used {
                state.used = used + total
            } else {
                // No report, or not loaded yet (the load will read this turn from the store).
                return
            }
            if let used = state.used { observe(used) }
        }
    }

    /// The history was cleared.
    func clear() {
        state.withLock { state in
            state.generation += 1
            state.used = 0
            observe(0)
        }
    }
}
