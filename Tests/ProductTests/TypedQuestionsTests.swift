// SPDX-License-Identifier: GPL-2.0-or-later
import AnswerModel
import AssistantEngine
import Glasses
import Logging
import Product
import Synchronization
import Testing

/// Typed questions (Manager1.Query) through the product alone: fake glasses, an in-memory server
/// and conversation. `ask` returns only once the answer is written and the glasses are released,
/// so the record is complete when it returns.
@Suite("Typed questions, any glasses", .timeLimit(.minutes(2)))
struct TypedQuestionsTests {
    final class World: Sendable {
        let glasses: FakeGlasses
        let events: RecordedEvents
        let server: FakeServer
        let conversation: MemoryConversation
        let records = MemoryRecords()
        let questions: TypedQuestions
        /// How often the product asked whether the caller may use Display.
        let displayAsked = Mutex(0)

        init(
            glasses hasGlasses: Bool = true, server hasServer: Bool = true, mode: Mode = .assistant, tokenLimit: Int64 = 0,
            local: LocalAnswering? = nil, speech: SpeechOut? = nil, answer: String = "It is noon.", showAnswer: String? = nil
        ) {
            let glasses = FakeGlasses()
            let events = RecordedEvents()
            let server = FakeServer(heard: "", answer: answer, showAnswer: showAnswer)
            let conversation = MemoryConversation()
            let client = OpenAIChatClient(
                config: ChatServerConfig(
                    baseURL: "http://server/v1", model: "m", apiKey: nil, timeout: .seconds(30), showAnswerTool: showAnswer != nil),
                transport: server)
            let assistant = Assistant(
                client: hasServer ? client : nil, store: conversation, historyBudget: 10_000,
                conversationTokenLimit: tokenLimit, local: local)
            self.glasses = glasses
            self.events = events
            self.server = server
            self.conversation = conversation
            questions = TypedQuestions(
                assistant: assistant, session: hasGlasses ? glasses : nil, signals: events, mode: ModeSetting(mode),
                speech: speech, logger: Logger(label: "test"), turns: records)
        }

        func ask(
            _ text: String, id: String = "q1", speak: Bool = false, mayShow: Bool = true
        ) async throws(AssistantError) -> AssistantReply {
            try await questions.ask(text, id: id, speak: speak) { [self] in
                self.displayAsked.withLock { $0 += 1 }
                return mayShow
            }
        }

        var said: [RecordedEvents.Event] { events.events.withLock { $0 } }
        var shown: FakeGlasses.Record { glasses.record.withLock { $0 } }
        var asked: Int { displayAsked.withLock { $0 } }
    }

    static let answered: [RecordedEvents.Event] = [
        .delta("It is"), .delta(" noon."), .answered(question: "what time is it", answer: "It is noon."),
    ]

    /// The answer text written to the glasses.
    static func text(_ pieces: [AnswerStream.Piece]) -> String {
        pieces.map { if case .text(let text) = $0 { text } else { "" } }.joined()
    }

    @Test("idle glasses: the answer streams to the caller and onto the glasses under its question, which are then released")
    func shownWhenIdle() async throws {
        let world = World()
        let reply = try await world.ask("what time is it")
        #expect(reply == AssistantReply(text: "It is noon.", typed: .text("It is noon."), answeredBy: nil))
        #expect(world.said == Self.answered)
        #expect(world.events.typed.withLock { $0 } == [reply])
        let shown = world.shown
        #expect(shown.pieces.first == .heading("> what time is it\n"))
        #expect(Self.text(shown.pieces) == "It is noon.")
        #expect(shown.pieces.last == .end)
        #expect(shown.finishedAnswers == 1)
        #expect(shown.pages.isEmpty, "a text answer stays as it streamed")
        #expect(world.asked == 1)
        #expect(world.conversation.turns.withLock { $0.map(\.text) } == ["what time is it", "It is noon."])
    }

    @Test("each typed question's timeline is kept: its first token, then its first and last words on the glasses; none for one refused before anything happened")
    func timelineKept() async throws {
        let world = World()
        _ = try await world.ask("what time is it")
        let stages = try #require(world.records.turns.withLock { $0["q1"] })
        #expect(Set(stages.keys) == ["first_token", "first_word", "last_word"], "\(stages)")
        let order = ["first_token", "first_word", "last_word"].compactMap { stages[$0] }
        #expect(order == order.sorted(), "\(stages)")
        // Answered to the caller alone: no words on the glasses, the first token only.
        _ = try await world.ask("what time is it", id: "q2", mayShow: false)
        #expect(world.records.turns.withLock { $0["q2"].map { Set($0.keys) } } == ["first_token"])
        await #expect(throws: AssistantError.self) { _ = try await world.ask("", id: "q3") }
        #expect(world.records.turns.withLock { $0["q3"] } == nil)
    }

    @Test("a caller that may not use Display: answered to it alone, nothing written on the glasses")
    func notShownWithoutDisplay() async throws {
        let world = World()
        let reply = try await world.ask("what time is it", mayShow: false)
        #expect(reply.text == "It is noon.")
        #expect(world.said == Self.answered)
        #expect(world.shown.pieces.isEmpty)
        #expect(world.shown.finishedAnswers == 0)
        #expect(world.asked == 1)
    }

    @Test("busy glasses: answered to the caller alone")
    func notShownWhenBusy() async throws {
        let world = World()
        world.glasses.refuseAnswers.withLock { $0 = .busy }
        let reply = try await world.ask("what time is it")
        #expect(reply.text == "It is noon.")
        #expect(world.said == Self.answered)
        #expect(world.shown.pieces.isEmpty)
        #expect(world.shown.finishedAnswers == 0)
    }

    @Test("no glasses: answered, and nobody asked about Display")
    func noGlasses() async throws {
        let world = World(glasses: false)
        let reply = try await world.ask("what time is it")
        #expect(reply.text == "It is noon.")
        #expect(world.said == Self.answered)
        #expect(world.asked == 0)
    }

    /// Questions the assistant refuses, by name (the name shows in the test's output, the text would not fit).
    static let invalidQuestions: [String: (text: String, refusal: String)] = [
        "empty": ("", "The question is empty."),
        "blank": (" \n\t", "The question is empty."),
        "longer than 16 KiB": (String(repeating: "a", count: Assistant.maxQuestionBytes + 1), "The question is longer than 16 KiB."),
    ]

    @Test(
        "an invalid question: refused with its typed error, reported failed, not shown, no server asked",
        arguments: ["empty", "blank", "longer than 16 KiB"])
    func invalid(name: String) async throws {
        let (question, refusal) = try #require(Self.invalidQuestions[name])
        let world = World()
        let error = AssistantError.invalidArgs(refusal)
        await #expect(throws: error) { try await world.ask(question) }
        #expect(world.said == [.failed("\(error)")])
        #expect(world.shown.pieces.isEmpty)
        #expect(world.shown.finishedAnswers == 0)
        #expect(world.asked == 0, "Display is not asked about for a question that will not be shown")
        #expect(world.server.requests.withLock { $0.isEmpty })
        #expect(world.conversation.turns.withLock { $0.isEmpty })
    }

    @Test("a question that fails: the failure reported and thrown, in red on the glasses under the question, nothing kept")
    func failureReported() async throws {
        let world = World(server: false)
        let error = AssistantError.notConfigured("No assistant server is configured: set [assistant] base_url in glassd.conf.")
        await #expect(throws: error) { try await world.ask("what time is it") }
        #expect(world.said == [.failed("\(error)")])
        #expect(world.events.typed.withLock { $0.isEmpty })
        let shown = world.shown
        #expect(shown.pieces.first == .heading("> what time is it\n"))
        let red = shown.pieces.map { if case .error(let text) = $0 { text } else { "" } }.joined()
        #expect(red == GlassesWording.text(for: error))
        #expect(!red.isEmpty)
        #expect(shown.pieces.last == .end)
        #expect(shown.finishedAnswers == 1)
        #expect(world.conversation.turns.withLock { $0.isEmpty })
    }

    @Test("the current mode's prompt and the conversation so far go to the assistant")
    func modeAndHistory() async throws {
        let world = World(mode: .translator)
        _ = try await world.ask("bonjour", id: "q1")
        _ = try await world.ask("merci", id: "q2")
        let requests = world.server.requests.withLock { $0 }
        #expect(requests.count == 2)
        #expect(requests.allSatisfy { $0.contains("You are a translator.") })
        #expect(!requests[0].contains("It is noon."))
        #expect(requests[1].contains("bonjour") && requests[1].contains("It is noon.") && requests[1].contains("merci"))
    }

    @Test("past the token limit the question starts a new conversation, and the glasses say so above it")
    func newConversationNotice() async throws {
        let world = World(tokenLimit: 100)
        world.conversation.used.withLock { $0 = 500 }
        _ = try await world.ask("what time is it")
        let pieces = world.shown.pieces
        #expect(pieces.contains(.heading("New conversation\n> what time is it\n")), "\(pieces)")
        #expect(Self.text(pieces).hasSuffix("It is noon."))
        #expect(world.said == Self.answered)
    }

    @Test("a local skill's answer with a form: laid out in pages on the glasses once the stream ended, its text form only to the caller")
    func laidOut() async throws {
        let list = TypedAnswer([.list(title: "Days", items: ["Monday", "Tuesday"])])
        let world = World(local: { _ in LocalAnswer(answeredBy: "skill:days", answer: list) })
        let reply = try await world.ask("what days")
        #expect(reply == AssistantReply(text: list.textForm, typed: list, answeredBy: "skill:days"))
        #expect(world.events.typed.withLock { $0 } == [reply])
        #expect(world.said == [.delta(list.textForm), .answered(question: "what days", answer: list.textForm)])
        let shown = world.shown
        #expect(shown.pieces == [.heading("> what days\n"), .end], "only the layout shows the answer")
        #expect(shown.pages == [AnswerPages.pages(list, layout: AnswerLayout(columns: 26, lines: 7))])
        #expect(shown.piecesBeforePages == [shown.pieces.count], "the stream ended before the pages")
        #expect(world.server.requests.withLock { $0.isEmpty }, "the local answer needed no server")
    }

    static let link = TypedAnswer([.link(text: "Eiffel Tower", url: "https://www.toureiffel.paris/en")])
    static let linkArguments = #"{"parts":[{"kind":"link","text":"Eiffel Tower","url":"https://www.toureiffel.paris/en"}]}"#

    @Test(
        "the model's typed answer with a link: its text (if any) streams, its text form (the URL) never reaches the glasses, whose stream ends before its pages; the caller and History get the text form",
        arguments: ["", "Here it is:"])
    func linkNeverStreamed(lead: String) async throws {
        let world = World(answer: lead, showAnswer: Self.linkArguments)
        let reply = try await world.ask("the tower's site")
        let typed = lead.isEmpty ? Self.link : TypedAnswer([.text(lead)] + Self.link.parts)
        #expect(reply.typed == typed)
        #expect(reply.text == (lead.isEmpty ? "" : lead + "\n") + Self.link.textForm)
        #expect(reply.text.contains("toureiffel.paris/en"))
        // The caller: every piece, the text form last, and the whole text as the answer.
        let said = world.said
        #expect(said.last == .answered(question: "the tower's site", answer: reply.text))
        let deltas = said.compactMap { if case .delta(let text) = $0 { text } else { nil } }
        #expect(deltas.joined() == reply.text)
        #expect(world.conversation.turns.withLock { $0.last?.text } == reply.text, "History keeps the text form")
        // The glasses: the lead text only, the stream's end, then the pages.
        let shown = world.shown
        #expect(!shown.pieces.contains { piece in
            switch piece {
            case .heading(let text), .text(let text), .error(let text): text.contains("toureiffel")
            case .end: false
            }
        }, "\(shown.pieces)")
        #expect(Self.text(shown.pieces) == lead)
        #expect(shown.pieces.last == .end)
        #expect(shown.finishedAnswers == 1)
        #expect(shown.pages == [AnswerPages.pages(typed, layout: AnswerLayout(columns: 26, lines: 7))])
        #expect(shown.piecesBeforePages == [shown.pieces.count], "the stream ended before the pages")
        // Its timeline: the first words are the lead's, or else the pages; the last are the pages.
        let stages = try #require(world.records.turns.withLock { $0["q1"] })
        let order = ["first_token", "first_word", "last_word"].compactMap { stages[$0] }
        #expect(order.count == 3 && order == order.sorted(), "\(stages)")
    }
}
