// SPDX-License-Identifier: GPL-2.0-or-later
import AssistantEngine
import Foundation
import Synchronization
import Testing

/// A stream of `pieces`, then (when given) the extra chunks servers end with, then [DONE].
private func stream(_ pieces: [String], ending: [String] = []) -> [String] {
    pieces.map { #"data: {"choices":[{"index":0,"delta":{"content":"\#($0)"}}],"usage":null}"# + "\n\n" }
        + ending.map { "data: \($0)\n\n" } + ["data: [DONE]\n\n"]
}

/// Numbers a callback heard, in order.
private final class Heard: Sendable {
    private let values = Mutex<[Int64]>([])
    func add(_ value: Int64) { values.withLock { $0.append(value) } }
    var all: [Int64] { values.withLock { $0 } }
}

@Suite("Conversation token limit", .timeLimit(.minutes(5)))
struct ConversationTokenLimitTests {
    /// Each answer "A" reports `prompt` + 1 tokens; nil: no usage chunk.
    private func answer(prompt: Int?) -> ScriptedTransport.Canned {
        let usage = prompt.map { #"{"choices":[],"usage":{"prompt_tokens":\#($0),"completion_tokens":1,"total_tokens":\#($0 + 1)}}"# }
        return .init(status: 200, chunks: stream(["A"], ending: usage.map { [$0] } ?? []))
    }

    private func assistant(_ transport: ScriptedTransport, _ store: MemoryStore, limit: Int64, seen: Heard) -> Assistant {
        let client = OpenAIChatClient(
            config: ChatServerConfig(baseURL: "http://x/v1", model: "m", apiKey: nil, timeout: .seconds(5)),
            transport: transport, sleep: { _ in })
        return Assistant(
            client: client, store: store, historyBudget: 1000, conversationTokenLimit: limit,
            onTokensUsed: { seen.add($0) }, now: { 42 })
    }

    private func contents(_ transport: ScriptedTransport, _ index: Int) throws -> [String] {
        let body = transport.requests.withLock { $0[index].body }
        let object = try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])
        return (object["messages"] as? [[String: Any]] ?? []).dropFirst().compactMap { $0["content"] as? String }
    }

    @Test("the count follows the reports; past the limit the next question goes alone and the count restarts")
    func rollsOver() async throws {
        let store = MemoryStore()
        let seen = Heard()
        let transport = ScriptedTransport([answer(prompt: 9), answer(prompt: 19), answer(prompt: 4), answer(prompt: 7)])
        let a = assistant(transport, store, limit: 25, seen: seen)
        let announced = Heard()
        func ask(_ text: String) async throws {
            _ = try await a.ask(text, queryID: text, mode: .assistant, onNewConversation: { announced.add($0) }) { _ in }
        }
        #expect(try await a.tokensUsed() == 0)
        try await ask("one")
        try await ask("two")  // 10 + 20: over 25 now
        try await ask("three")
        try await ask("four")
        #expect(seen.all == [10, 30, 5, 13])
        #expect(announced.all == [30])
        #expect(try contents(transport, 1) == ["one", "A", "two"])
        #expect(try contents(transport, 2) == ["three"])
        #expect(try contents(transport, 3) == ["three", "A", "four"])
        #expect(try await a.tokensUsed() == 13)
        #expect(store.past.withLock { $0.map { $0.map(\.text) } } == [["one", "A", "two", "A"]])
        #expect(store.messages.withLock { $0.map(\.text) } == ["three", "A", "four", "A"])
    }

    @Test("exactly at the limit is not over it; no limit never starts anew")
    func boundaries() async throws {
        let store = MemoryStore()
        let seen = Heard()
        let transport = ScriptedTransport([answer(prompt: 9), answer(prompt: 9)])
        let a = assistant(transport, store, limit: 10, seen: seen)
        _ = try await a.ask("one", queryID: "1", mode: .assistant) { _ in }
        _ = try await a.ask("two", queryID: "2", mode: .assistant) { _ in }
        #expect(try contents(transport, 1) == ["one", "A", "two"])

        let unlimited = ScriptedTransport([answer(prompt: 1000), answer(prompt: 1000)])
        let b = assistant(unlimited, MemoryStore(), limit: 0, seen: seen)
        _ = try await b.ask("one", queryID: "1", mode: .assistant) { _ in }
        _ = try await b.ask("two", queryID: "2", mode: .assistant) { _ in }
        #expect(try contents(unlimited, 1) == ["one", "A", "two"])
    }

    @Test("a server that reports nothing leaves the count as it was; clearing makes it 0")
    func noReportAndClear() async throws {
        let store = MemoryStore()
        let seen = Heard()
        let transport = ScriptedTransport([answer(prompt: 9), answer(prompt: nil)])
        let a = assistant(transport, store, limit: 0, seen: seen)
        _ = try await a.ask("one", queryID: "1", mode: .assistant) { _ in }
        _ = try await a.ask("two", queryID: "2", mode: .assistant) { _ in }
        #expect(try await a.tokensUsed() == 10)
        try await a.clearHistory()
        #expect(try await a.tokensUsed() == 0)
        #expect(seen.all == [10, 0])
    }

    @Test("the count at start is the store's")
    func loadsOnce() async throws {
        let store = MemoryStore()
        try await store.appendTurn(
            queryID: "old", question: "q", answer: "a", mode: .assistant, at: 1,
            usage: TokenUsage(promptTokens: 30, completionTokens: 3), newConversation: false)
        let a = assistant(ScriptedTransport([]), store, limit: 0, seen: Heard())
        #expect(try await a.tokensUsed() == 33)
    }
}
