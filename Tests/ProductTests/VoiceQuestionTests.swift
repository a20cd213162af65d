// SPDX-License-Identifier: GPL-2.0-or-later
import AnswerModel
import AssistantEngine
import Audio
import Foundation
import Glasses
import Logging
import Product
import Synchronization
import Testing
import TestSupport

/// Spoken questions through the product alone: fake glasses, an in-memory server and stores.
@Suite("Spoken questions, any glasses", .timeLimit(.minutes(5)))
struct VoiceQuestionTests {
    /// The Monocle recording of a spoken question (Tests/AudioTests/Fixtures, 8 kHz signed 8-bit).
    static func speech() throws -> [UInt8] {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../AudioTests/Fixtures/speech-clean.s8")
        return Array(try Data(contentsOf: url))
    }

    struct World {
        let glasses = FakeGlasses()
        let events = RecordedEvents()
        let records = MemoryRecords()
        /// The watchdog's clock: time passes only when a test says so.
        let clock = ManualClock()
        let queries: VoiceQueries<ManualClock>
        let inputs: AsyncStream<VoiceQueries<ManualClock>.Input>
        let feed: AsyncStream<VoiceQueries<ManualClock>.Input>.Continuation

        init(heard: String = "what time is it", answer: String = "It is noon.", showAnswer: String? = nil, mode: Mode = .assistant) {
            queries = Self.queries(
                server: FakeServer(heard: heard, answer: answer, showAnswer: showAnswer), glasses: glasses, events: events,
                records: records, mode: mode, clock: clock, device: "AA:BB:CC:DD:EE:FF", showAnswerTool: showAnswer != nil)
            (inputs, feed) = AsyncStream.makeStream(of: VoiceQueries<ManualClock>.Input.self)
        }

        /// The product under test, its chat and speech requests both to `server`.
        static func queries(
            server: any HTTPTransport, glasses: FakeGlasses, events: RecordedEvents, records: MemoryRecords, mode: Mode,
            sees: Bool = true, clock: ManualClock, device: String?, logger: Logger = Logger(label: "test"),
            showAnswerTool: Bool = false
        ) -> VoiceQueries<ManualClock> {
            let client = OpenAIChatClient(
                config: ChatServerConfig(
                    baseURL: "http://server/v1", model: "m", apiKey: nil, timeout: .seconds(30), showAnswerTool: showAnswerTool),
                transport: server)
            let transcriber = TranscriptionClient(
                config: TranscriptionConfig(baseURL: "http://server/v1", model: "whisper", apiKey: nil, timeout: .seconds(30)),
                transport: server)
            return VoiceQueries(
                session: glasses, assistant: Assistant(client: client, store: MemoryConversation(), historyBudget: 1000),
                transcriber: transcriber, transcriptions: records, photos: records, signals: events, mode: ModeSetting(mode),
                voice: VoiceSettings(), visionModel: nil, abilities: BackendAbilities(hears: true, sees: sees, translates: true),
                device: { device }, latestSceneFrame: { nil }, clock: clock, logger: logger, turns: records)
        }

        /// Runs the product while `body` plays the wearer.
        func run(_ body: () async throws -> Void) async rethrows {
            let product = Task { await queries.run(inputs) }
            feed.yield(.status(SessionStatus(state: .ready, generation: 1)))
            try await body()
            feed.finish()
            await product.value
        }

        func ask(_ samples: [UInt8], format: AudioFormat, chunk: Int = 240) {
            feed.yield(.glasses(.questionStart(photo: false, audio: format)))
            var start = 0
            while start < samples.count {
                feed.yield(.glasses(.audio(Array(samples[start..<min(samples.count, start + chunk)]))))
                start += chunk
            }
            feed.yield(.glasses(.audioEnd))
        }
    }

    @Test(
        "a question in the Monocle's 8-bit audio and in Frame's 16-bit audio: heard, stopped at its end, answered word by word on the glasses, stored",
        arguments: [8, 16])
    func answered(bits: Int) async throws {
        let world = World()
        let speech = try Self.speech()
        // Frame's 16-bit little-endian samples: each 8-bit sample as the high byte.
        let samples = bits == 8 ? speech : speech.flatMap { [0, $0] }
        try await world.run {
            world.ask(samples, format: AudioFormat(sampleRate: 8_000, bits: bits), chunk: bits == 8 ? 240 : 480)
            let said = await world.events.untilEnded()
            #expect(said == [
                .transcribed("what time is it"), .delta("It is"), .delta(" noon."),
                .answered(question: "what time is it", answer: "It is noon."),
            ])
            await world.glasses.wait { $0.finishedAnswers == 1 }
        }
        let record = world.glasses.record.withLock { $0 }
        #expect(record.stopRecordings == 1, "the end of speech was heard before the recording ended")
        #expect(record.pieces.first == .heading("> what time is it\n"))
        #expect(record.pieces.last == .end)
        #expect(record.pieces.dropFirst().dropLast().map { if case .text(let t) = $0 { t } else { "?" } }.joined() == "It is noon.")
        #expect(world.records.transcriptions.withLock { $0.values.map(\.consumed) } == [true])
    }

    @Test("each turn's timeline is kept with it: the end of speech, the audio sent, the transcript, the first token, the first and last words shown, in that order")
    func timeline() async throws {
        let world = World()
        try await world.run {
            world.ask(try Self.speech(), format: AudioFormat(sampleRate: 8_000, bits: 8))
            _ = await world.events.untilEnded()
            await world.glasses.wait { $0.finishedAnswers == 1 }
        }
        let turns = world.records.turns.withLock { $0 }
        #expect(turns.count == 1)
        let stages = try #require(turns.values.first)
        let order = ["speech_end", "audio_sent", "transcript", "first_token", "first_word", "last_word"]
        let times = order.compactMap { stages[$0] }
        #expect(times.count == order.count, "\(stages)")
        #expect(times == times.sorted(), "\(stages)")
        #expect(stages["first_audio"] == nil, "nothing was spoken")
    }

    @Test("the model's typed answer with a link: its text form (the URL) goes to the caller, never to the glasses, whose stream ends before the pages")
    func linkLaidOut() async throws {
        let world = World(heard: "the tower's site", answer: "", showAnswer: TypedQuestionsTests.linkArguments)
        let link = TypedQuestionsTests.link
        try await world.run {
            world.ask(try Self.speech(), format: AudioFormat(sampleRate: 8_000, bits: 8))
            let said = await world.events.untilEnded()
            #expect(said == [
                .transcribed("the tower's site"), .delta(link.textForm),
                .answered(question: "the tower's site", answer: link.textForm),
            ])
            await world.glasses.wait { !$0.pages.isEmpty }
        }
        #expect(link.textForm.contains("toureiffel.paris/en"))
        let record = world.glasses.record.withLock { $0 }
        #expect(record.pieces == [.heading("> the tower's site\n"), .end], "the URL never reached the display")
        #expect(record.finishedAnswers == 1)
        #expect(record.pages == [AnswerPages.pages(link, layout: AnswerLayout(columns: 26, lines: 7))])
        #expect(record.piecesBeforePages == [record.pieces.count], "the stream ended before the pages")
        let stages = try #require(world.records.turns.withLock { $0.values.first })
        let order = ["transcript", "first_token", "first_word", "last_word"].compactMap { stages[$0] }
        #expect(order.count == 4 && order == order.sorted(), "\(stages)")
    }

    @Test("silence: no question, said in red on the glasses, failed as no speech")
    func silence() async throws {
        let world = World()
        try await world.run {
            world.ask([UInt8](repeating: 0, count: 16_000), format: AudioFormat(sampleRate: 8_000, bits: 8))
            let said = await world.events.untilEnded()
            #expect(said == [.failed("\(VoiceFailure.noSpeech)")])
            await world.glasses.wait { $0.finishedAnswers == 1 }
        }
        let pieces = world.glasses.record.withLock { $0.pieces }
        #expect(pieces == [.error(VoiceFailure.noSpeech.wording), .end])
    }

    @Test("a format the recorder does not take fails the question with a clear error, and loses nothing after it")
    func unsupportedFormat() async throws {
        let world = World()
        try await world.run {
            world.feed.yield(.glasses(.questionStart(photo: false, audio: AudioFormat(sampleRate: 44_100, bits: 24))))
            let said = await world.events.untilEnded()
            #expect(said.count == 1)
            if case .failed(let why) = said.first { #expect(why.contains("44100 Hz 24-bit"), "\(why)") }
            world.ask(try Self.speech(), format: AudioFormat(sampleRate: 8_000, bits: 8))
            let then = await world.events.until { $0.contains { if case .answered = $0 { true } else { false } } }
            #expect(then.last == .answered(question: "what time is it", answer: "It is noon."))
        }
    }

    @Test("glasses that start a recording and then send nothing: after 10 s of silence from them the question fails, and they are told to stop")
    func silentGlasses() async throws {
        let world = World()
        try await world.run {
            world.feed.yield(.glasses(.questionStart(photo: false, audio: AudioFormat(sampleRate: 8_000, bits: 8))))
            await world.clock.sleeping()  // the watchdog waits
            // Nothing can wake before the deadline: no event yet.
            world.clock.advance(by: .milliseconds(9_999))
            #expect(world.events.events.withLock { $0.isEmpty })
            world.clock.advance(by: .milliseconds(1))
            let said = await world.events.untilEnded()
            #expect(said == [.failed("\(VoiceFailure.recordingNeverEnded)")])
            await world.glasses.wait { $0.stopRecordings == 1 && $0.finishedAnswers == 1 }
        }
    }

    @Test("a recording no question owns (an agent session ended during it): the glasses are told to stop once, and its end gets an empty answer")
    func strayRecording() async throws {
        let world = World()
        try await world.run {
            for _ in 0..<3 { world.feed.yield(.glasses(.audio([UInt8](repeating: 0, count: 160)))) }
            world.feed.yield(.glasses(.audioEnd))
            await world.glasses.wait { $0.finishedAnswers == 1 }
            let record = world.glasses.record.withLock { $0 }
            #expect(record.stopRecordings == 1)
            #expect(record.pieces == [.end])
            #expect(world.events.events.withLock { $0.isEmpty }, "no question was asked")
        }
    }
}
