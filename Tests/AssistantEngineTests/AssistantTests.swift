// SPDX-License-Identifier: GPL-2.0-or-later
import AnswerModel
import AssistantEngine
import Synchronization
import Testing

/// An in-memory conversation.
final class MemoryStore: ConversationStore {
    /// The current conversation.
    let messages = Mutex<[StoredMessage]>([])
    /// Earlier conversations, oldest first.
    let past = Mutex<[[StoredMessage]]>([])
    let tokens = Mutex<Int64>(0)

    func recentMessages(limit: Int) async throws -> [StoredMessage] {
        messages.withLock { Array($0.suffix(limit)) }
    }

    func cutAnswer(queryID: String, to text: String) async throws {
        messages.withLock { turns in
            for i in turns.indices where turns[i].queryID == queryID && turns[i].role == .assistant { turns[i].text = text }
        }
    }

    func appendTurn(
        queryID: String, question: String, answer: String, mode: Mode, at unixMS: Int64, usage: TokenUsage?,
        newConversation: Bool
    ) async throws {
        messages.withLock { messages in
            if newConversation && !messages.isEmpty {
                past.withLock { $0.append(messages) }
                messages.removeAll()
            }
            messages.append(StoredMessage(createdAt: unixMS, queryID: queryID, role: .user, text: question))
            messages.append(StoredMessage(createdAt: unixMS, queryID: queryID, role: .assistant, text: answer))
        }
        tokens.withLock { $0 = (newConversation ? 0 : $0) + (usage?.total ?? 0) }
    }

    func tokensUsed() async throws -> Int64 { tokens.withLock { $0 } }

    func clearHistory() async throws {
        messages.withLock { $0.removeAll() }
        past.withLock { $0.removeAll() }
        tokens.withLock { $0 = 0 }
    }
}

@Suite("Assistant", .timeLimit(.minutes(5)))
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

    @Test("an answer cut off as it was spoken: kept as far as it was said")
    func cut() async throws {
        let store = MemoryStore()
        let assistant = Assistant(client: nil, store: store, historyBudget: 8000)
        try await assistant.record(question: "tell me a story", answer: "Once upon a time. There was a fox. The end.", queryID: "q1", mode: .assistant)
        try await assistant.cut(queryID: "q1", question: nil, spoken: "Once upon a time.", mode: .assistant)
        #expect(store.messages.withLock { $0.map(\.text) } == ["tell me a story", "Once upon a time."])
        // Cut while it still streamed: the turn is kept now, as spoken.
        try await assistant.cut(queryID: "q2", question: "and then", spoken: "Then the fox", mode: .assistant)
        #expect(store.messages.withLock { $0.suffix(2).map(\.text) } == ["and then", "Then the fox"])
    }

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

    @Test("a photo goes out once, to the vision model; the next turn's context has the text only")
    func photoOnce() async throws {
        let store = MemoryStore()
        let transport = ScriptedTransport([.init(status: 200, chunks: stream), .init(status: 200, chunks: stream)])
        let a = assistant(transport, store)
        let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0, 1, 2, 3, 0xFF, 0xD9]
        _ = try await a.ask("what is this", queryID: "q1", mode: .assistant, image: jpeg, model: "vision") { _ in }
        _ = try await a.ask("and now", queryID: "q2", mode: .assistant) { _ in }
        let (first, second) = transport.requests.withLock {
            (String(decoding: $0[0].body, as: UTF8.self), String(decoding: $0[1].body, as: UTF8.self))
        }
        #expect(first.contains(#""model":"vision""#))
        #expect(first.contains(#"{"type":"image_url","image_url":{"url":"data:image/jpeg;base64,/9j/4AECA//Z"}}"#))
        #expect(first.contains(#"{"type":"text","text":"what is this"}"#))
        #expect(second.contains(#""model":"m""#))
        #expect(!second.contains("image_url") && !second.contains("base64"))
        #expect(second.contains(#"{"content":"what is this","role":"user"}"#))
        #expect(store.messages.withLock { $0.map(\.text) } == ["what is this", "A", "and now", "A"])
    }

    @Test("a recorded turn is stored and is context for the next question, with no server asked")
    func record() async throws {
        let store = MemoryStore()
        let transport = ScriptedTransport([.init(status: 200, chunks: stream), .init(status: 200, chunks: stream)])
        let a = assistant(transport, store)
        _ = try await a.ask("first", queryID: "q0", mode: .assistant) { _ in }
        try await a.record(question: "(spoken)", answer: "hello world", queryID: "q1", mode: .translator)
        #expect(transport.count == 1)
        #expect(store.messages.withLock { $0.map(\.text) } == ["first", "A", "(spoken)", "hello world"])
        _ = try await a.ask("next", queryID: "q2", mode: .assistant) { _ in }
        let body = String(decoding: transport.requests.withLock { $0[1].body }, as: UTF8.self)
        #expect(body.contains(#"{"content":"(spoken)","role":"user"},{"content":"hello world","role":"assistant"}"#))
    }

    @Test("a photo that is not a JPEG is refused before any server is asked")
    func badPhoto() async throws {
        let transport = ScriptedTransport([])
        let a = assistant(transport, MemoryStore())
        for image: [UInt8] in [[], [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A]] {
            await #expect(throws: AssistantError.invalidArgs("The photo is not a JPEG image.")) {
                try await a.ask("what is this", queryID: "q", mode: .assistant, image: image) { _ in }
            }
        }
        #expect(transport.count == 0)
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

    @Test("reply's pieces: the model's text as text; a local skill's typed answer as its text form, which ask hears as plain text")
    func pieceKinds() async throws {
        let store = MemoryStore()
        let model = assistant(ScriptedTransport([.init(status: 200, chunks: stream)]), store)
        let pieces = Mutex<[AnswerPiece]>([])
        _ = try await model.reply("one", queryID: "q1", mode: .assistant) { p in pieces.withLock { $0.append(p) } }
        #expect(pieces.withLock { $0 } == [.text("A")])

        let link = TypedAnswer([.link(text: "Eiffel Tower", url: "https://www.toureiffel.paris/en")])
        let local = Assistant(
            client: nil, store: store, historyBudget: 1000,
            local: { _ in LocalAnswer(answeredBy: "skill:link", answer: link) })
        pieces.withLock { $0.removeAll() }
        let reply = try await local.reply("the tower", queryID: "q2", mode: .assistant) { p in pieces.withLock { $0.append(p) } }
        #expect(pieces.withLock { $0 } == [.textForm(link.textForm, of: link)])
        #expect(reply.text == link.textForm && reply.typed == link)
        let heard = Mutex<[String]>([])
        _ = try await local.ask("the tower", queryID: "q3", mode: .assistant) { p in heard.withLock { $0.append(p) } }
        #expect(heard.withLock { $0 } == [link.textForm])
        #expect(store.messages.withLock { $0.last?.text } == link.textForm, "History keeps the text form")
    }
}
