// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import Foundation
import GlassdAPI
import Testing

private let worldReady = BLEWorld.available || ProcessInfo.processInfo.environment["GLASSD_REQUIRE_BLE"] != nil
private let halo = 3

/// Barge-in by voice on a virtual Halo: while it speaks an answer its microphone stays open behind
/// the echo canceller; its speaker's sound reaches that microphone 12 dB down, 20 ms late, and the
/// virtual canceller leaves 35 dB less of it. The fake server's voice is a 440 Hz tone.
@Suite("Barge-in by voice on a virtual Halo", .timeLimit(.minutes(10)), .serialized, .enabled(if: worldReady, "the Python BLE world is not set up"))
struct HaloBargeInTests {
    static let first = "echo: what is the tallest mountain"

    private func transcriptions(_ world: World) async throws -> [[String: Any]] {
        try await world.serverRequests().filter { ($0["path"] as? String)?.hasSuffix("/audio/transcriptions") == true }
    }

    private func answerOf(_ bus: BusConnection, _ id: String) async throws -> [String: DBusValue] {
        let answer = try await bus.call(
            GlassdBus.name, path: GlassdBus.managerPath, interface: GlassdBus.managerInterface, member: "AnswerOf", [.string(id)])
        return (answer.last?.stringKeyed ?? [:]).compactMapValues { if case .variant(let v) = $0 { v } else { nil } }
    }

    /// Asks the first question with a tap; returns its id once the speaker has played `played` bytes
    /// of its answer, spoken `msPerChar` a character.
    private func askSpoken(
        _ ble: BLEWorld, _ bus: BusConnection, _ vf: VirtualFrame, played: UInt64, msPerChar: Int = 300
    ) async throws -> String {
        try await vf.call("FeedAudio", [.string(try SpeechFixture.speech(in: ble.world.directory))])
        try await ble.world.setSpeech(["ms_per_char": msPerChar])
        try await ble.world.setTranscript("what is the tallest mountain")
        let started = try await bus.signals(SignalMatch(path: vf.path, interface: VirtualFrame.interface, member: "SpeakerStarted"))
        let signals = try await questionSignals(bus)
        try await vf.call("Tap")
        let first = try await untilEnd(signals)
        #expect(first.last?.member == GlassdBus.Signal.answered)
        let id = try #require(first.last?.arguments.first?.string)
        try await within(.seconds(30), failure: { "the Halo's speaker never started" }) {
            for await _ in started { return }
        }
        try await vf.call("WaitPlayed", [.uint64(played)])
        return id
    }

    @Test("the wearer speaks over the answer: it stops, and what they say, from its first word, is the next question, with no tap; History keeps the answer as far as it was said, marked cut")
    func voiceCutsSpeech() async throws {
        try await BLEWorld.with { ble in
            try await ble.withFrameSession(halo, halo: true) { bus, vf in
                try await ble.pairReady(halo, bus)
                // A slow voice (about a minute): a loaded machine still feeds the wearer's voice while it
                // speaks, and the cut is plain although it comes late (it costs nothing when it does not).
                let firstID = try await askSpoken(ble, bus, vf, played: 4_000, msPerChar: 1_800)
                let tapsBefore = try await vf.stats()["taps", default: 0]
                try await ble.world.setSpeech(["ms_per_char": 60])
                try await ble.world.setTranscript("and now")
                let next = try await questionSignals(bus)
                // The wearer speaks (1 s of room, the 3.3 s question, 1.5 s of room) while the answer plays.
                try await vf.call("FeedAudio", [.string(try SpeechFixture.speech(in: ble.world.directory))])
                let second = try await untilEnd(next)
                #expect(second.last?.member == GlassdBus.Signal.answered, "\(second.map(\.member))")
                try await vf.waitForDisplay(containing: "echo: and now")
                #expect(try await vf.stats()["taps", default: 0] == tapsBefore, "no tap asked it")
                // Nothing of the question was lost: its 3.3 s, and the silence after it up to the
                // pause its eager transcript was asked at (100 ms), or the 0.8 s that ended it.
                let asked = try await transcriptions(ble.world)
                #expect(asked.count >= 2, "a request for each question (and eager ones at its pauses)")
                let seconds = (asked.last?["duration_s"] as? NSNumber)?.doubleValue ?? 0
                #expect(seconds >= 3.3 + 0.1 && seconds <= 7.5, "the question's recording lasts \(seconds) s")
                let stats = try await vf.speakerStats()
                let full = Double(Self.first.count) * 1.800 * 4_000
                #expect(Double(stats["played", default: 0]) < full * 0.8, "the first answer was cut: \(stats)")
                #expect(stats["ble_rejected_bytes"] == 0, "\(stats)")
                let kept = try await answerOf(bus, firstID)
                #expect(kept["cut"] == .bool(true), "\(kept)")
                let said = kept["text"]?.string ?? ""
                #expect(!said.isEmpty && Self.first.hasPrefix(said) && said.count < Self.first.count, "kept: \(said)")
            }
        }
    }

    @Test("the answer's own echo, behind the canceller, never stops it; with the canceller off it would")
    func echoAlone() async throws {
        try await BLEWorld.with { ble in
            try await ble.withFrameSession(halo, halo: true) { bus, vf in
                try await ble.pairReady(halo, bus)
                let firstID = try await askSpoken(ble, bus, vf, played: 100)
                let asked = try await transcriptions(ble.world).count  // the question's, eager ones included
                // Played out: the speaker stops after the whole answer (the app's stop before it
                // started is behind us: the speaker has played).
                let stops = try await bus.signals(SignalMatch(path: vf.path, interface: VirtualFrame.interface, member: "SpeakerStopped"))
                try await within(.seconds(40), failure: { "the answer was never played out" }) {
                    for await _ in stops { return }
                }
                let full = Double(Self.first.count) * 0.300 * 4_000
                let played = Double(try await vf.speakerStats()["played", default: 0])
                #expect(played >= full * 0.95, "played \(played) of \(full)")
                let whole = try await answerOf(bus, firstID)
                #expect(whole["cut"] == nil && whole["text"]?.string == Self.first, "\(whole)")
                #expect(try await transcriptions(ble.world).count == asked, "no question came of the echo")

                // The canceller broken: the same answer's echo is loud enough to be taken for the
                // wearer, and the question it starts (what the microphone hears then) ends too.
                try await vf.call("SetEchoCancel", [.bool(false)])
                let next = try await questionSignals(bus)
                let secondID = try await askSpoken(ble, bus, vf, played: 100)
                try await within(.seconds(60), failure: { "no question followed the echo" }) {
                    var ends = 0
                    for await signal in next where signal.member == GlassdBus.Signal.answered || signal.member == GlassdBus.Signal.queryFailed {
                        ends += 1
                        if ends == 2 { return }
                    }
                }
                let kept = try await answerOf(bus, secondID)
                #expect(kept["cut"] == .bool(true), "the echo did not barge in: \(kept)")
            }
        }
    }
}
