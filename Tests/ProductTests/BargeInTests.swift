// SPDX-License-Identifier: GPL-2.0-or-later
import Audio
import Glasses
import Product
import Synchronization
import Testing
import TestSupport

/// The wearer speaking over an answer the glasses speak: what they overhear (behind their echo
/// canceller) is listened to, and the question it starts keeps what was heard before the glasses
/// began recording it.
@Suite("Barge-in by voice", .timeLimit(.minutes(5)))
struct BargeInTests {
    typealias World = VoiceQuestionTests.World
    static let format8 = AudioFormat(sampleRate: 8_000, bits: 8)
    /// What is left of the question once the glasses record it: the wearer has finished.
    static let silence = [UInt8](repeating: 0, count: 8_000)

    private func overhear(_ world: World, _ bytes: [UInt8], format: AudioFormat = Self.format8) {
        var start = 0
        while start < bytes.count {
            world.feed.yield(.glasses(.overheard(Array(bytes[start..<min(bytes.count, start + 160)]), format: format)))
            start += 160
        }
    }

    @Test("the wearer's voice over the answer: the glasses are told once to stop and record, and the question they record begins with what was overheard")
    func voice() async throws {
        let world = World()
        try await world.run {
            overhear(world, try VoiceQuestionTests.speech())
            await world.glasses.wait { $0.bargeIns == 1 }
            // The whole question was said before the glasses switched: only silence is recorded.
            world.ask(Self.silence, format: Self.format8)
            let said = await world.events.untilEnded()
            #expect(said.first == .transcribed("what time is it"))
            #expect(said.last == .answered(question: "what time is it", answer: "It is noon."))
        }
        let record = world.glasses.record.withLock { $0 }
        #expect(record.bargeIns == 1)
        #expect(record.stopRecordings == 1, "the end of the question was found in what was overheard")
    }

    @Test("the answer's echo, as far down as an echo canceller leaves it, stops nothing: the next question is the wearer's alone")
    func echo() async throws {
        let world = World()
        // As 16-bit samples 47 dB down.
        let echo = try VoiceQuestionTests.speech().flatMap { byte -> [UInt8] in
            let sample = Int16(Double(Int8(bitPattern: byte)) * 256 * 0.0045)
            return [UInt8(truncatingIfNeeded: sample), UInt8(truncatingIfNeeded: sample >> 8)]
        }
        await world.run {
            overhear(world, echo, format: AudioFormat(sampleRate: 8_000, bits: 16))
            world.ask(Self.silence, format: Self.format8)
            let said = await world.events.untilEnded()
            #expect(said == [.failed("\(VoiceFailure.noSpeech)")])
        }
        #expect(world.glasses.record.withLock { $0.bargeIns } == 0)
    }

    @Test("a question started long after the wearer spoke over an answer does not begin with that old audio")
    func stale() async throws {
        let world = World()
        // Only up to the piece the wearer's voice is heard in: pieces still queued when the clock
        // moves on would be heard as another answer's, and start an ear of their own.
        let speech = try VoiceQuestionTests.speech()
        let onset = try SpeechOnset(input: PCMInput(sampleRate: 8_000, bits: 8))
        let heardAt = try #require(stride(from: 0, to: speech.count, by: 160).first { onset.append(Array(speech[$0..<min(speech.count, $0 + 160)])) })
        await world.run {
            overhear(world, Array(speech[..<min(speech.count, heardAt + 160)]))
            await world.glasses.wait { $0.bargeIns == 1 }
            world.clock.advance(by: .seconds(16))  // past the ear's window
            world.ask(Self.silence, format: Self.format8)
            let said = await world.events.untilEnded()
            #expect(said == [.failed("\(VoiceFailure.noSpeech)")])
        }
    }
}
