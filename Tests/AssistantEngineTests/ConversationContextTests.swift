// SPDX-License-Identifier: GPL-2.0-or-later
@testable import AssistantEngine
import Synchronization
import Testing

/// A MemoryStore that counts its reads.
final class CountingStore: ConversationStore {
    let inner = MemoryStore()
    let reads = Mutex(0)

    func recentMessages(limit: Int) async throws -> [StoredMessage] {
        reads.withLock { $0 += 1 }
        return try await inner.recentMessages(limit: limit)
    }

    func cutAnswer(queryID: String, to text: String) async throws { try await inner.cutAnswer(queryID: queryID, to: text) }

    func appendTurn(
        queryID: String, question: String, answer: String, mode: Mode, at unixMS: Int64, usage: TokenUsage?,
        newConversation: Bool
    ) async throws {
        try await inner.appendTurn(
            queryID: queryID, question: question, answer: answer, mode: mode, at: unixMS, usage: usage,
            newConversation: newConversation)
    }

    func tokensUsed() async throws -> Int64 { try await inner.tokensUsed() }

    func clearHistory() async throws { try await inner.clearHistory() }
}

@Suite("Conversation context in memory", .timeLimit(.minutes(5)))
struct ConversationContextTests {
    @Test("after a stored answer changes (cut as spoken), the next turn reads the store again and sends the cut text")
    func reloadAfterCut() async throws {
        let store = CountingStore()
        let context = ConversationContext(store: store, budget: 8000, window: 50)
        try await store.appendTurn(queryID: "q1", question: "story", answer: "One. Two. Three.", mode: .assistant, at: 1)
        #expect(try await context.messages().map(\.content) == ["story", "One. Two. Three."])
        try await store.cutAnswer(queryID: "q1", to: "One.")
        #expect(try await context.messages().map(\.content) == ["story", "One. Two. Three."], "cached until told")
        context.reload()
        #expect(try await context.messages().map(\.content) == ["story", "One."])
        #expect(store.reads.withLock { $0 } == 2)
    }

    @Test("read once, then appended turns give what trimming the whole history would", arguments: [0, 7, 40])
    func matchesFullSelection(budget: Int) async throws {
        let store = CountingStore()
        for i in 0..<5 {
            try await store.appendTurn(queryID: "\(i)", question: "q\(i)", answer: "answer \(i)", mode: .assistant, at: 0)
        }
        let context = ConversationContext(store: store, budget: budget, window: 1000)
        for i in 5..<40 {
            // Characters, not bytes or scalars: "e" with a combining accent is one.
            let question = String(repeating: "x", count: i % 7) + String(repeating: "e\u{301}🙂", count: i % 3)
            let answer = "a\(i)"
            _ = try await context.messages()
            try await store.appendTurn(queryID: "\(i)", question: question, answer: answer, mode: .assistant, at: 0)
            context.append(question: question, answer: answer)
            let everything = try await store.inner.recentMessages(limit: 1000).map { ChatMessage($0.role, $0.text) }
            #expect(try await context.messages() == ContextBudget.select(everything, budget: budget))
        }
        #expect(store.reads.withLock { $0 } == 1)
        context.clear()
        #expect(try await context.messages().isEmpty)
        #expect(store.reads.withLock { $0 } == 1)
    }

    @Test("a turn stored while the first read is under way is not lost")
    func appendBeforeLoad() async throws {
        let store = CountingStore()
        let context = ConversationContext(store: store, budget: 100, window: 1000)
        try await store.appendTurn(queryID: "1", question: "q", answer: "a", mode: .assistant, at: 0)
        context.append(question: "q", answer: "a")
        #expect(try await context.messages() == [ChatMessage(.user, "q"), ChatMessage(.assistant, "a")])
    }
}
