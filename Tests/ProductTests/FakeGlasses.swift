// SPDX-License-Identifier: GPL-2.0-or-later
import AssistantEngine
import Concurrency
import Foundation
import Glasses
import LinkKit
import Product
import Synchronization

/// Glasses in memory: what the product shows on them and asks of them is recorded; the test says
/// what the wearer does by handing `GlassesEvent`s to the product directly.
final class FakeGlasses: GlassesSession {
    struct Record {
        var pieces: [AnswerStream.Piece] = []
        var stopRecordings = 0
        /// Told the wearer spoke over the answer (`bargeIn`).
        var bargeIns = 0
        var finishedAnswers = 0
        var alerts: [String?] = []
        var listening: [Bool] = []
        var questionsStarted: [String] = []
        /// Laid-out answers, each as its pages.
        var pages: [[String]] = []
        /// How many pieces had been written when each laid-out answer was shown.
        var piecesBeforePages: [Int] = []
    }

    /// What `answerStream(claim:)` throws, if anything (busy or gone glasses).
    let refuseAnswers = Mutex<SessionError?>(nil)

    /// What `startQuestion(heard:)` throws, if anything (busy glasses).
    let refuseQuestions = Mutex<SessionError?>(nil)

    /// The speaker these glasses have, if any.
    let speakerFitted = Mutex<(any GlassesSpeaker)?>(nil)

    let record = Mutex(Record())
    let changed = Pulse()
    private let sink = Broadcast<SessionEvent>()

    func subscribe() -> AsyncStream<SessionEvent> { sink.subscribe() }
    var current: SessionStatus { SessionStatus(state: .ready) }
    func run(links: AsyncStream<LinkEvent>, restart: @escaping @Sendable (String) async -> Void) async {}
    func display(_ text: String) async throws { note { $0.pieces.append(.heading(text)) } }

    func answerStream(claim: Bool) async throws -> AnswerStream {
        if let refusal = refuseAnswers.withLock({ $0 }) { throw refusal }
        return AnswerStream(maxPayload: 64) { [self] piece in note { $0.pieces.append(piece) } }
    }

    func answerFinished(_ stream: AnswerStream?) async { note { $0.finishedAnswers += 1 } }
    func stopRecording() async throws { note { $0.stopRecordings += 1 } }
    func bargeIn() async throws { note { $0.bargeIns += 1 } }
    func requestSceneFrame() async throws {}
    func speaker() async -> (any GlassesSpeaker)? { speakerFitted.withLock { $0 } }
    func showAlert(_ text: String?) async throws { note { $0.alerts.append(text) } }
    func showPages(_ pages: [String]) async throws {
        note {
            $0.pages.append(pages)
            $0.piecesBeforePages.append($0.pieces.count)
        }
    }
    func pageLayout() async -> AnswerLayout { AnswerLayout(columns: 26, lines: 7) }
    func setListening(_ on: Bool) async throws { note { $0.listening.append(on) } }

    func startQuestion(heard: String) async throws {
        if let refusal = refuseQuestions.withLock({ $0 }) { throw refusal }
        note { $0.questionsStarted.append(heard) }
    }

    /// What the glasses report, to every subscriber.
    func emit(_ event: SessionEvent) { sink.publish(event) }

    private func note(_ change: (inout Record) -> Void) {
        record.withLock { change(&$0) }
        changed.pulse()
    }

    /// Waits until `done` holds of the record, or the test is cancelled (its time limit): a
    /// cancelled wait returns at once, so looping on it would spin.
    func wait(until done: (Record) -> Bool) async {
        while !Task.isCancelled {
            let ticket = changed.ticket()
            if record.withLock({ done($0) }) { return }
            await changed.wait(after: ticket)
        }
    }
}

/// What the product said, in order.
final class RecordedEvents: QueryEvents {
    enum Event: Equatable {
        case transcribed(String)
        case delta(String)
        case answered(question: String, answer: String)
        case failed(String)
    }

    let events = Mutex<[Event]>([])
    /// The answers' structures (`answerTyped`), apart: they follow `answered`.
    let typed = Mutex<[AssistantReply]>([])
    let changed = Pulse()

    private func add(_ event: Event) {
        events.withLock { $0.append(event) }
        changed.pulse()
    }

    func transcribed(_ id: String, _ text: String) { add(.transcribed(text)) }
    func answerDelta(_ id: String, _ text: String) { add(.delta(text)) }
    func answered(_ id: String, question: String, answer: String) { add(.answered(question: question, answer: answer)) }
    func answerTyped(_ id: String, _ reply: AssistantReply) { typed.withLock { $0.append(reply) } }
    func failed(_ id: String, _ error: any Error) { add(.failed("\(error)")) }
    func sceneFrame(_ number: UInt32, _ verdict: String) {}
    func alert(_ text: String) {}

    /// Waits until `done` holds of what was said, and returns it.
    func until(_ done: ([Event]) -> Bool) async -> [Event] {
        while !Task.isCancelled {
            let ticket = changed.ticket()
            let now = events.withLock { $0 }
            if done(now) { return now }
            await changed.wait(after: ticket)
        }
        return events.withLock { $0 }  // cancelled (the time limit): what was said so far
    }

    /// Waits for the question's end (answered or failed) and returns everything said.
    func untilEnded() async -> [Event] {
        await until { $0.contains { if case .answered = $0 { true } else if case .failed = $0 { true } else { false } } }
    }
}

/// Stores that keep what they are given.
final class MemoryRecords: TranscriptionRecords, PhotoKeeping, TurnRecords {
    let transcriptions = Mutex<[String: (text: String, consumed: Bool)]>([:])
    let photos = Mutex<[String: [UInt8]]>([:])
    /// Each turn's stages (µs from its start), by query id.
    let turns = Mutex<[String: [String: Int64]]>([:])

    func keep(queryID: String, at unixMS: Int64, stages: [String: Int64]) async throws {
        turns.withLock { $0[queryID] = stages }
    }

    func insert(id: String, text: String, device: String?, at unixMS: Int64) async throws {
        transcriptions.withLock { $0[id] = (text, false) }
    }

    func markConsumed(id: String, at unixMS: Int64) async throws {
        transcriptions.withLock { $0[id]?.consumed = true }
    }

    func save(queryID: String, jpeg: [UInt8], at unixMS: Int64) async throws {
        photos.withLock { $0[queryID] = jpeg }
    }
}

/// An OpenAI-compatible server in memory: transcriptions say `heard`, chat answers `answer` in
/// two pieces (none if empty), then calls `show_answer` with `showAnswer` when given; the bodies
/// of the requests it got are kept.
final class FakeServer: HTTPTransport {
    let heard: String
    let answer: String
    /// The arguments (JSON) of a `show_answer` call after the answer's text.
    let showAnswer: String?
    let requests = Mutex<[String]>([])

    init(heard: String, answer: String, showAnswer: String? = nil) {
        self.heard = heard
        self.answer = answer
        self.showAnswer = showAnswer
    }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        requests.withLock { $0.append(String(decoding: request.body, as: UTF8.self)) }
        if request.url.hasSuffix("/audio/transcriptions") || request.url.hasSuffix("/audio/translations") {
            return Self.response(["content-type": "application/json"], #"{"text": "\#(heard)"}"#)
        }
        let half = answer.index(answer.startIndex, offsetBy: answer.count / 2)
        var events = [String(answer[..<half]), String(answer[half...])].filter { !$0.isEmpty }.map { piece in
            #"data: {"choices":[{"index":0,"delta":{"content":"\#(piece)"}}]}"# + "\n\n"
        }.joined()
        if let showAnswer {
            let arguments = showAnswer.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            events += #"data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"show_answer","arguments":"\#(arguments)"}}]}}]}"# + "\n\n"
        }
        events += "data: [DONE]\n\n"
        return Self.response(["content-type": "text/event-stream"], events)
    }

    private static func response(_ headers: [String: String], _ body: String) -> HTTPResponse {
        let (stream, sink) = AsyncThrowingStream.makeStream(of: [UInt8].self)
        sink.yield(Array(body.utf8))
        sink.finish()
        return HTTPResponse(status: 200, headers: headers, body: stream)
    }
}

/// A conversation in memory.
final class MemoryConversation: ConversationStore {
    let turns = Mutex<[StoredMessage]>([])
    /// The current conversation's tokens, as the server would have reported them.
    let used = Mutex<Int64>(0)

    func recentMessages(limit: Int) async throws -> [StoredMessage] { turns.withLock { Array($0.suffix(limit)) } }

    func cutAnswer(queryID: String, to text: String) async throws {
        turns.withLock { turns in
            for i in turns.indices where turns[i].queryID == queryID && turns[i].role == .assistant { turns[i].text = text }
        }
    }

    func appendTurn(
        queryID: String, question: String, answer: String, mode: Mode, at unixMS: Int64, usage: TokenUsage?,
        newConversation: Bool
    ) async throws {
        turns.withLock {
            $0.append(StoredMessage(createdAt: unixMS, queryID: queryID, role: .user, text: question))
            $0.append(StoredMessage(createdAt: unixMS, queryID: queryID, role: .assistant, text: answer))
        }
    }

    func tokensUsed() async throws -> Int64 { used.withLock { $0 } }
    func clearHistory() async throws { turns.withLock { $0.removeAll() } }
}
