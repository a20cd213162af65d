// SPDX-License-Identifier: GPL-2.0-or-later
import Synchronization

/// The current conversation's context, kept in memory: read from the store once, then each turn
/// is appended and the budget trims the oldest, so a turn costs the same however long the
/// conversation. Trimming what was already trimmed gives what trimming everything would: the
/// budget's suffix of a longer history is always within the suffix of a shorter one.
final class ConversationContext: Sendable {
    private struct Loaded {
        var messages: [ChatMessage]
        /// Each message's length in characters, and their sum: counting characters walks the
        /// text, so each message is counted once, not every turn.
        var lengths: [Int]
        var used: Int

        init(_ messages: [ChatMessage]) {
            self.messages = messages
            lengths = messages.map(\.content.count)
            used = lengths.reduce(0, +)
        }

        /// What `ContextBudget.select` keeps of these messages plus the new ones: drop from the
        /// oldest end while they do not fit or do not start with a question.
        mutating func append(_ new: [ChatMessage], budget: Int) {
            for message in new {
                messages.append(message)
                lengths.append(message.content.count)
                used += lengths[lengths.count - 1]
            }
            var drop = 0
            while drop < messages.count && (budget <= 0 || used > budget || messages[drop].role != .user) {
                used -= lengths[drop]
                drop += 1
            }
            messages.removeFirst(drop)
            lengths.removeFirst(drop)
        }
    }

    private struct State {
        /// nil until loaded.
        var loaded: Loaded?
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
        let (cached, generation) = state.withLock { ($0.loaded?.messages, $0.generation) }
        if let cached { return cached }
        let stored = try await store.recentMessages(limit: window)
        let selected = ContextBudget.select(stored.map { ChatMessage($0.role, $0.text) }, budget: budget)
        state.withLock { state in
            if state.generation == generation, state.loaded == nil { state.loaded = Loaded(selected) }
        }
        return selected
    }

    /// A turn was stored.
    func append(question: String, answer: String) {
        state.withLock { state in
            state.generation += 1
            // Not loaded yet: the load will read this turn from the store.
            state.loaded?.append([ChatMessage(.user, question), ChatMessage(.assistant, answer)], budget: budget)
        }
    }

    /// A stored turn changed (an answer cut short): the next turn reads the store again.
    func reload() {
        state.withLock { state in
            state.generation += 1
            state.loaded = nil
        }
    }

    /// The history was cleared.
    func clear() {
        state.withLock { state in
            state.generation += 1
            state.loaded = Loaded([])
        }
    }
}
