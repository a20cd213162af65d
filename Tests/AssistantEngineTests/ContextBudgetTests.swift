// SPDX-License-Identifier: GPL-2.0-or-later
import AssistantEngine
import Testing

@Suite("Context budget", .timeLimit(.minutes(5)))
struct ContextBudgetTests {
    private let history = [
        ChatMessage(.user, "aaaa"), ChatMessage(.assistant, "bbbb"),
        ChatMessage(.user, "cccc"), ChatMessage(.assistant, "dddd"),
        ChatMessage(.user, "eeee"), ChatMessage(.assistant, "ffff"),
    ]

    @Test("everything fits: nothing dropped")
    func fits() {
        #expect(ContextBudget.select(history, budget: 24) == history)
    }

    @Test("the oldest whole turns go first")
    func dropsOldestTurns() {
        #expect(ContextBudget.select(history, budget: 23) == Array(history[2...]))
        #expect(ContextBudget.select(history, budget: 16) == Array(history[2...]))
        #expect(ContextBudget.select(history, budget: 15) == Array(history[4...]))
    }

    @Test("never an answer without its question")
    func keepsPairs() {
        // 4 characters would fit "ffff" alone, but not its question.
        #expect(ContextBudget.select(history, budget: 7).isEmpty)
        #expect(ContextBudget.select(history, budget: 0).isEmpty)
        #expect(ContextBudget.select([], budget: 100).isEmpty)
    }
}
