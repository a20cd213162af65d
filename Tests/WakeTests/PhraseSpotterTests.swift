// SPDX-License-Identifier: GPL-2.0-or-later
import Audio
import Testing
import Wake

/// The spotter on espeak-ng's speech: the phrase wakes it once, other speech does not, and what
/// a user writes in glassd.conf is checked before anything listens.
@Suite(.timeLimit(.minutes(10))) struct PhraseSpotterTests {
    let settings = WakeSettings(phrase: "hey glasses")

    /// Fed in 20 ms pieces, as the glasses' and the host's audio arrives; the sample offsets of the wakes.
    func wakes(_ spotter: PhraseSpotter, _ samples: [Int16]) -> [Int] {
        var found: [Int] = []
        var at = 0
        while at < samples.count {
            let piece = Array(samples[at..<min(at + 320, samples.count)])
            at += piece.count
            if spotter.feed(piece) { found.append(at) }
        }
        return found
    }

    @Test func thePhraseWakesItOnce() async throws {
        let spotter = try PhraseSpotter(settings)
        let lead = try await SpokenFixture.say("the bus was late this morning")
        let phrase = try await SpokenFixture.say("hey glasses")
        let found = wakes(spotter, lead + phrase)
        #expect(found.count == 1)
        // Heard in the phrase (or its trailing silence), not in the sentence before it.
        #expect(found.allSatisfy { $0 > lead.count })
    }

    @Test func speechWithoutThePhraseDoesNotWakeIt() async throws {
        let spotter = try PhraseSpotter(settings)
        let speech = try await SpokenFixture.say("please turn left at the next junction and park behind the shop")
            + SpokenFixture.say("the weather forecast promises rain for the whole week")
        #expect(wakes(spotter, speech).isEmpty)
    }

    @Test func eightKilohertzEightBitAudioFromTheGlassesStillWakesIt() async throws {
        // The Monocle's microphone: 8 kHz, each sample's high byte (every other sample, as the
        // virtual Monocle takes them); converted back as glassd does. The spotter adapts to such
        // narrow audio over its first seconds of speech (its cepstral mean starts at wideband's),
        // as it does listening all day: the phrase comes after three sentences.
        let speech = try await SpokenFixture.say("the bus was late this morning")
            + SpokenFixture.say("please turn left at the next junction and park behind the shop")
            + SpokenFixture.say("the weather forecast promises rain for the whole week") + SpokenFixture.say("hey glasses")
        let narrow = stride(from: 0, to: speech.count, by: 2).map { UInt8(bitPattern: Int8(truncatingIfNeeded: speech[$0] >> 8)) }
        let converter = try PCMConverter(input: PCMInput(sampleRate: 8_000, bits: 8))
        var wide: [Int16] = []
        for start in stride(from: 0, to: narrow.count, by: 127) {
            wide += converter.convert(Array(narrow[start..<min(start + 127, narrow.count)]))
        }
        #expect(wakes(try PhraseSpotter(settings), wide).count == 1)
    }

    @Test func aRestartForgetsAHalfHeardPhrase() async throws {
        let spotter = try PhraseSpotter(settings)
        let phrase = try await SpokenFixture.say("hey glasses", pad: 0.2)
        let half = phrase.count / 2
        #expect(wakes(spotter, Array(phrase[..<half])).isEmpty)
        spotter.restart()
        #expect(wakes(spotter, Array(phrase[half...]) + [Int16](repeating: 0, count: 8_000)).isEmpty)
    }

    @Test func phrasesAreCheckedBeforeListening() throws {
        #expect(try WakeSettings.normalized("Hey, Glasses!") == "hey glasses")
        #expect(throws: WakeError.badPhrase("it has no words")) { try WakeSettings.normalized(" ,!? ") }
        #expect(throws: WakeError.unknownWord("glassdzx")) { try PhraseSpotter(WakeSettings(phrase: "hey glassdzx")) }
        #expect {
            try PhraseSpotter(WakeSettings(phrase: "hey glasses", model: "/nonexistent"))
        } throws: { error in
            guard case .model(let detail) = error as? WakeError else { return false }
            return detail.contains("pocketsphinx-en-us")
        }
    }

    @Test func theThreadReportsAWakeAndFinishes() async throws {
        let thread = try SpotterThread(settings)
        let phrase = try await SpokenFixture.say("hey glasses")
        for start in stride(from: 0, to: phrase.count, by: 320) {
            thread.submit(Array(phrase[start..<min(start + 320, phrase.count)]))
        }
        thread.finish()
        var count = 0
        var seconds: UInt64 = 0
        for await event in thread.events {
            switch event {
            case .wake: count += 1
            case .decoded(let whole): seconds = whole
            }
        }
        #expect(count == 1)
        #expect(seconds == UInt64(phrase.count / PhraseSpotter.sampleRate))
        #expect(thread.decodedSamples == UInt64(phrase.count))
    }

    @Test func aReleasedThreadFinishes() async throws {
        weak var released: SpotterThread?
        let events: AsyncStream<SpotterEvent>
        do {
            let thread = try SpotterThread(settings)
            released = thread
            events = thread.events
        }
        #expect(released == nil, "something still holds the spotter thread")
        // Its events end when its thread does; 60 s is a guard against a hang, not a timing.
        let ended = await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                for await _ in events {}
                return !Task.isCancelled
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(60))
                return false
            }
            defer { group.cancelAll() }
            return await group.next() ?? false
        }
        #expect(ended, "the released spotter's thread did not finish")
    }
}
