// SPDX-License-Identifier: GPL-2.0-or-later
import Synchronization

/// The current conversation's context, kept in memory: read from the store once, then each turn
/// is appended and the budget trims the oldest, so a turn costs the same however long the
/// conversation. Trimming what was already trimmed gives what trimming everything would: the
/// budget's suffix of a longer history is always within the suffix of a shorter one.
final class ConversationContext: Sendable {
    private struct State {
        /// nil until loaded.
        var messages: [ChatMessage]?
        /// Bumped by every change, so a load that raced one is not installed over it.
        var generation = 0
    }

    private let store: any ConversationStore
    private let budget: Int
    /// How many stored messages the first load reads; the budget bounds what is kept after.
    private let window: Int
    private let state = Mutex(State())

    init(store: any ConversationStore, budget: Int, window: Int) {
        self.store = store
        self.budget = budget
        self.window = window
    }

    /// The context for the next turn, oldest first.
    func messages() async throws -> [ChatMessage] {
        let (cached, generation) = state.withLock { ($0.messages, $0.generation) }
        if let cached { return cached }
        let stored = try await store.recentMessages(limit: window)
        let selected = ContextBudget.select(stored.map { ChatMessage($0.role, $0.text) }, budget: budget)
        state.withLock { state in
            if state.generation == generation, state.messages == nil { state.messages = selected }
        }
        return selected
    }

    /// A turn was stored.
    func append(question: String, answer: String) {
        state.withLock { state in
            state.generation += 1
            // Not loaded yet: the load will read this turn from the store.
            guard let messages = state.messages else { return }
            state.messages = ContextBudget.select(
                messages + [ChatMessage(.user, question), ChatMessage(.assistant, answer)], budget: budget)
        }
    }

    /// The history was cleared.
    func clear() {
        state.withLock { state in
            state.generation += 1
            state.messages = []
        }
    }
}
