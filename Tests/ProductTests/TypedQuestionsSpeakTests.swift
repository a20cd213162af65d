// SPDX-License-Identifier: GPL-2.0-or-later
import AssistantEngine
import Glasses
import Product
import Synchronization
import Testing

/// QueryWith's speak: a typed answer is spoken on the glasses' speaker only when its caller asks.
@Suite("Typed questions spoken when asked", .timeLimit(.minutes(5)))
struct TypedQuestionsSpeakTests {
    typealias World = TypedQuestionsTests.World

    /// Glasses with a speaker, and speech on.
    static func world(cutAt: Int? = nil, speech on: Bool = true) -> (World, FakeVoice, FakeSpeaker) {
        let voice = FakeVoice()
        let speaker = FakeSpeaker(voice: voice, cutAt: cutAt)
        let world = World(speech: on ? SpeechOut(voice: voice, volume: 55) : nil)
        world.glasses.speakerFitted.withLock { $0 = speaker }
        return (world, voice, speaker)
    }

    @Test("asked: spoken as it is shown, played out before the reply; the answer as without speech")
    func spokenWhenAsked() async throws {
        let (world, voice, speaker) = Self.world()
        let reply = try await world.ask("what time is it", speak: true)
        #expect(reply.text == "It is noon.")
        #expect(voice.sentences == ["It is noon."])
        let record = speaker.now
        #expect(record.volume == 55)
        #expect(record.writes.count == 2)
        #expect(record.finished == 1 && record.stopped == 0, "played out before the reply")
        #expect(world.said == TypedQuestionsTests.answered)
        #expect(TypedQuestionsTests.text(world.shown.pieces) == "It is noon.")
    }

    @Test("a typed answer with a link is spoken as its words: the lead and the link's text, never its URL", arguments: ["", "Here it is:"])
    func linkSpokenAsWords(lead: String) async throws {
        let voice = FakeVoice()
        let speaker = FakeSpeaker(voice: voice, cutAt: nil)
        let world = TypedQuestionsTests.World(
            speech: SpeechOut(voice: voice, volume: 55), answer: lead, showAnswer: TypedQuestionsTests.linkArguments)
        world.glasses.speakerFitted.withLock { $0 = speaker }
        let reply = try await world.ask("the tower's site", speak: true)
        #expect(reply.text.contains("https://www.toureiffel.paris/en"), "the caller has the text form")
        let said = voice.sentences.joined(separator: " ").split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(said == (lead.isEmpty ? "" : lead + " ") + "Eiffel Tower", "\(voice.sentences)")
        #expect(!said.contains("toureiffel"))
    }

    @Test("not asked (Query): nothing spoken")
    func silentByDefault() async throws {
        let (world, voice, speaker) = Self.world()
        let reply = try await world.ask("what time is it")
        #expect(reply.text == "It is noon.")
        #expect(voice.sentences.isEmpty)
        #expect(speaker.now.volume == nil, "the speaker never started")
        #expect(TypedQuestionsTests.text(world.shown.pieces) == "It is noon.")
    }

    @Test("asked, but speech is off ([speech_out] speak = never): nothing spoken, answered")
    func speechOff() async throws {
        let (world, voice, speaker) = Self.world(speech: false)
        #expect(try await world.ask("what time is it", speak: true).text == "It is noon.")
        #expect(voice.sentences.isEmpty)
        #expect(speaker.now.volume == nil)
    }

    @Test("asked by a caller that may not use Display: neither shown nor spoken")
    func notWithoutDisplay() async throws {
        let (world, voice, speaker) = Self.world()
        #expect(try await world.ask("what time is it", speak: true, mayShow: false).text == "It is noon.")
        #expect(voice.sentences.isEmpty)
        #expect(speaker.now.volume == nil)
        #expect(world.shown.pieces.isEmpty)
    }

    @Test("asked, glasses busy with their own answer: not spoken over it")
    func notWhenBusy() async throws {
        let (world, voice, _) = Self.world()
        world.glasses.refuseAnswers.withLock { $0 = .busy }
        #expect(try await world.ask("what time is it", speak: true).text == "It is noon.")
        #expect(voice.sentences.isEmpty)
    }

    @Test("a tap stops the speech only: the caller gets the whole answer and it is stored whole")
    func tapStopsSpeechOnly() async throws {
        let (world, _, speaker) = Self.world(cutAt: 1)
        let reply = try await world.ask("what time is it", speak: true)
        #expect(reply.text == "It is noon.")
        let record = speaker.now
        #expect(record.writes.isEmpty)
        #expect(record.stopped == 1 && record.finished == 0)
        #expect(world.said == TypedQuestionsTests.answered)
        #expect(world.conversation.turns.withLock { $0.map(\.text) } == ["what time is it", "It is noon."])
    }
}
