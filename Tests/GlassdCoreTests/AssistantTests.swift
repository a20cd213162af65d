// SPDX-License-Identifier: GPL-2.0-or-later
import GlassdCore
import Synchronization
import Testing

/// An in-memory conversation.
final class MemoryStore: ConversationStore {
    let messages = Mutex<[StoredMessage]>([])

    func recentMessages(limit: Int) async throws -> [StoredMessage] {
        messages.withLock { Array($0.suffix(limit)) }
    }

    func appendTurn(queryID: String, question: String, answer: String, mode: Mode, at unixMS: Int64) async throws {
        messages.withLock {
            $0.append(StoredMessage(createdAt: unixMS, queryID: queryID, role: .user, text: question))
            $0.append(StoredMessage(createdAt: unixMS, queryID: queryID, role: .assistant, text: answer))
        }
    }

    func clearHistory() async throws { messages.withLock { $0.removeAll() } }
}

@Suite("Assistant")
struct AssistantTests {
    private func assistant(_ transport: ScriptedTransport?, _ store: MemoryStore) -> Assistant {
        let client = transport.map {
            OpenAIChatClient(
                config: ChatServerConfig(baseURL: "http://x/v1", model: "m", apiKey: nil, timeout: .seconds(5)),
                transport: $0, sleep: { _ in })
        }
        return Assistant(client: client, store: store, historyBudget: 1000, now: { 42 })
    }

    private let stream = ["data: {\"choices\":[{\"delta\":{\"content\":\"A\"}}]}\n\n", "data: [DONE]\n\n"]

    @Test("both turns are stored, and sent as context next time")
    func storesTurns() async throws {
        let store = MemoryStore()
        let transport = ScriptedTransport([.init(status: 200, chunks: stream), .init(status: 200, chunks: stream)])
        let a = assistant(transport, store)
        _ = try await a.ask("one", queryID: "q1", mode: .assistant) { _ in }
        _ = try await a.ask("two", queryID: "q2", mode: .translator) { _ in }
        #expect(store.messages.withLock { $0.map(\.text) } == ["one", "A", "two", "A"])
        let second = String(decoding: transport.requests.withLock { $0[1].body }, as: UTF8.self)
        #expect(second.contains("Translate"))
        #expect(second.contains(#""content":"one""#))
    }

    @Test("bad questions are refused before any server is asked")
    func validation() async throws {
        let store = MemoryStore()
        let transport = ScriptedTransport([])
        let a = assistant(transport, store)
        await #expect(throws: AssistantError.invalidArgs("The question is empty.")) {
            try await a.ask(" \t\n", queryID: "q", mode: .assistant) { _ in }
        }
        await #expect(throws: AssistantError.invalidArgs("The question is longer than 16 KiB.")) {
            try await a.ask(String(repeating: "é", count: 8193), queryID: "q", mode: .assistant) { _ in }
        }
        #expect(transport.count == 0)
        await #expect(throws: AssistantError.self) {
            try await assistant(nil, store).ask("hi", queryID: "q", mode: .assistant) { _ in }
        }
        #expect(store.messages.withLock { $0.isEmpty })
    }
}
