// SPDX-License-Identifier: GPL-2.0-or-later
import AssistantEngine
import Audio
import Foundation
import Glasses
import Product
import Synchronization
import Testing
import TestSupport

/// The end of a spoken turn: at a short pause the words so far are transcribed; a question
/// ends the turn there, another finished sentence at a longer pause, anything else waits for the
/// long silence, speech after the pause drops them, and a failed eager request leaves the
/// question to the usual one.
@Suite("End of turn", .timeLimit(.minutes(1)))
struct EndOfTurnTests {
    /// Speech with no pause in it as long as the eager one (checked by `noPauseInside`): a
    /// piece of the Monocle recording, 8 kHz signed 8-bit.
    static func speech() throws -> [UInt8] {
        Array(try VoiceQuestionTests.speech()[Self.speechRange])
    }
    static let speechRange = 8_000..<17_600

    /// `milliseconds` of silence, 8 kHz 8-bit.
    static func silence(_ milliseconds: Int) -> [UInt8] { [UInt8](repeating: 0, count: milliseconds * 8) }

    static let format = AudioFormat(sampleRate: 8_000, bits: 8)

    struct World {
        let glasses = FakeGlasses()
        let events = RecordedEvents()
        let records = MemoryRecords()
        let log = CapturedLog()
        let server: GatedSpeechServer
        let queries: VoiceQueries<ManualClock>
        let feed: AsyncStream<VoiceQueries<ManualClock>.Input>.Continuation
        let inputs: AsyncStream<VoiceQueries<ManualClock>.Input>

        init(replies: [GatedSpeechServer.Reply], mode: Mode = .assistant, sees: Bool = true) {
            server = GatedSpeechServer(replies: replies)
            queries = VoiceQuestionTests.World.queries(
                server: server, glasses: glasses, events: events, records: records, mode: mode, sees: sees,
                clock: ManualClock(), device: nil, logger: log.logger)
            (inputs, feed) = AsyncStream.makeStream(of: VoiceQueries<ManualClock>.Input.self)
        }

        func run(_ body: () async throws -> Void) async rethrows {
            let product = Task { await queries.run(inputs) }
            feed.yield(.status(SessionStatus(state: .ready, generation: 1)))
            try await body()
            feed.finish()
            await product.value
        }

        func start(photo: Bool = false) { feed.yield(.glasses(.questionStart(photo: photo, audio: EndOfTurnTests.format))) }

        func send(_ bytes: [UInt8]) {
            for start in stride(from: 0, to: bytes.count, by: 240) {
                feed.yield(.glasses(.audio(Array(bytes[start..<min(bytes.count, start + 240)]))))
            }
        }

        func end() { feed.yield(.glasses(.audioEnd)) }

        /// The question starts, the wearer speaks and pauses; the eager transcript asked there
        /// comes back reading as unfinished.
        func speakToAnUnfinishedPause() async throws {
            start()
            send(try EndOfTurnTests.speech() + EndOfTurnTests.silence(400))
            await server.wait { $0.arrived.count == 1 }
            server.release()
            await log.wait(for: "eager transcript back ending=unfinished")
        }

        var arrived: [String] { server.state.withLock { $0.arrived } }

        /// glassd told the glasses to stop: they end the recording, and the answer follows.
        func stoppedThenAnswered() async -> [RecordedEvents.Event] {
            await glasses.wait { $0.stopRecordings == 1 }
            end()
            return await answered()
        }

        /// The one question's answer, once it is over.
        func answered() async -> [RecordedEvents.Event] {
            let said = await events.untilEnded()
            await glasses.wait { $0.finishedAnswers == 1 }
            return said
        }
    }

    @Test("the speech piece the tests use has no pause inside: only its end is one")
    func noPauseInside() throws {
        let recorder = try UtteranceRecorder(input: PCMInput(sampleRate: 8_000, bits: 8))
        let inside = recorder.append(try Self.speech())
        #expect(inside == [.speechStarted])
        #expect(recorder.append(Self.silence(400)) == [.paused])
    }

    @Test("a finished sentence ends the turn at the short pause, and its eager transcript is the question: one request")
    func finishedEndsAtPause() async throws {
        let world = World(replies: [.text("What time is it?")])
        try await world.run {
            world.start()
            world.send(try Self.speech() + Self.silence(400))  // half the trailing silence
            await world.server.wait { $0.arrived.count == 1 }
            world.server.release()
            let said = await world.stoppedThenAnswered()
            #expect(said.first == .transcribed("What time is it?"))
            #expect(said.last == .answered(question: "What time is it?", answer: "Paris."))
        }
        #expect(world.arrived == ["transcriptions"], "no second request")
        let stages = try #require(world.records.turns.withLock { $0.values.first })
        let order = ["speech_end", "audio_sent", "transcript", "first_token", "first_word"].compactMap { stages[$0] }
        #expect(order.count == 5 && order == order.sorted(), "\(stages)")
    }

    @Test("a pause after \"of\" waits: the words after it are in the question")
    func unfinishedWaits() async throws {
        let world = World(replies: [.text("What is the capital of"), .text("What is the capital of France?")])
        try await world.run {
            try await world.speakToAnUnfinishedPause()
            world.send(try Self.speech() + Self.silence(400))  // "France", then a pause
            await world.server.wait { $0.arrived.count == 2 }
            world.server.release()
            let said = await world.stoppedThenAnswered()
            #expect(said.last == .answered(question: "What is the capital of France?", answer: "Paris."))
        }
        #expect(world.arrived.count == 2)
    }

    @Test("a statement does not end at the short pause: the words after a breath are in the question, and it ends at the statement pause, before the long silence")
    func statementWaits() async throws {
        let world = World(replies: [.text("Who wrote the book."), .text("Who wrote the book Pride and Prejudice.")])
        try await world.run {
            world.start()
            world.send(try Self.speech() + Self.silence(400))  // a breath of 400 ms: less than the statement pause
            await world.server.wait { $0.arrived.count == 1 }
            world.server.release()
            await world.log.wait(for: "eager transcript back ending=statement")
            world.send(try Self.speech() + Self.silence(400))  // "Pride and Prejudice", then a pause
            await world.server.wait { $0.arrived.count == 2 }
            world.server.release()
            await world.log.wait(for: "eager transcript back ending=statement", count: 2)
            // 750 ms of silence in all: past the statement pause (650 ms, heard 700 ms in: the filters hold
            // some back), short of the long silence (800 ms, heard 840 ms in).
            world.send(Self.silence(350))
            let said = await world.stoppedThenAnswered()
            #expect(said.first == .transcribed("Who wrote the book Pride and Prejudice."))
        }
        #expect(world.arrived.count == 2, "the eager transcript at the end was the question: no request after it")
    }

    @Test("an unfinished sentence with nothing after it ends at the long silence, with its eager transcript: one request")
    func unfinishedReused() async throws {
        let world = World(replies: [.text("Tell me about the weather in")])
        try await world.run {
            try await world.speakToAnUnfinishedPause()
            #expect(world.glasses.record.withLock { $0.stopRecordings } == 0)
            world.send(Self.silence(500))  // past the trailing silence
            let said = await world.stoppedThenAnswered()
            #expect(said.first == .transcribed("Tell me about the weather in"))
        }
        #expect(world.arrived.count == 1, "the eager transcript was the whole question")
    }

    @Test("speech after the eager snapshot drops it: its request is cancelled and the question is what came after")
    func speechAfterDrops() async throws {
        let world = World(replies: [.text("What is the capital of France?"), .text("What is the capital of France and Spain?")])
        try await world.run {
            world.start()
            world.send(try Self.speech() + Self.silence(400))
            await world.server.wait { $0.arrived.count == 1 }
            world.send(try Self.speech())  // the wearer goes on before the first is back
            await world.server.wait { $0.cancelled == 1 }
            world.send(Self.silence(400))
            await world.server.wait { $0.arrived.count == 2 }
            world.server.release()  // the first (cancelled: never read)
            world.server.release()
            let said = await world.stoppedThenAnswered()
            #expect(said.first == .transcribed("What is the capital of France and Spain?"))
        }
        #expect(world.arrived.count == 2)
    }

    @Test("a failed eager request does not fail the question: the usual request at the end answers it")
    func eagerFailureFallsBack() async throws {
        let world = World(replies: [.status(500), .text("What time is it?")])
        try await world.run {
            world.release(2)
            world.start()
            world.send(try Self.speech() + Self.silence(1_000))
            let said = await world.stoppedThenAnswered()
            #expect(said == [
                .transcribed("What time is it?"), .delta("Paris."), .answered(question: "What time is it?", answer: "Paris."),
            ])
        }
        #expect(world.arrived.count == 2, "one eager attempt (not retried), then the usual request")
    }

    @Test("a photo question for a backend that cannot see makes no eager request: it fails with no request at all")
    func photoUnseenNoEager() async throws {
        let world = World(replies: [.text("What is this?")], sees: false)
        try await world.run {
            world.start(photo: true)
            world.feed.yield(.glasses(.photoData([0xFF, 0xD8, 0x00, 0x00, 0xFF, 0xD9])))
            world.feed.yield(.glasses(.photoEnd))
            world.send(try Self.speech() + Self.silence(1_000))
            let said = await world.stoppedThenAnswered()
            #expect(said == [.failed("\(VoiceFailure.cannotSee)")])
        }
        #expect(world.arrived.isEmpty)
    }

    @Test("translator mode makes no eager request: the translation is asked for once, at the long silence")
    func translatorNoEager() async throws {
        let world = World(replies: [.text("Where is the station?")], mode: .translator)
        try await world.run {
            world.release(1)
            world.start()
            world.send(try Self.speech() + Self.silence(1_000))
            let said = await world.stoppedThenAnswered()
            #expect(said.first == .transcribed("Where is the station?"))
        }
        #expect(world.arrived == ["translations"])
    }
}

extension EndOfTurnTests.World {
    func release(_ count: Int) {
        for _ in 0..<count { server.release() }
    }
}
