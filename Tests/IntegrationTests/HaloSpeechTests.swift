// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import Foundation
import GlassdAPI
import Testing

private let worldReady = BLEWorld.available || ProcessInfo.processInfo.environment["GLASSD_REQUIRE_BLE"] != nil
private let halo = 3

/// QueryWith's speak and `[speech_out] speak` on a virtual Halo: its speaker plays at real time
/// from an 8 KB buffer; the fake server's /v1/audio/speech answers a tone of 60 ms per character.
@Suite("Spoken typed answers on a virtual Halo", .timeLimit(.minutes(10)), .serialized, .enabled(if: worldReady, "the Python BLE world is not set up"))
struct HaloSpeechTests {
    static let question = "what is the tallest mountain"
    static let answer = "echo: what is the tallest mountain"

    private func speechRequests(_ world: World) async throws -> Int {
        try await world.serverRequests().filter { ($0["path"] as? String)?.hasSuffix("/audio/speech") == true }.count
    }

    /// The speaker's counters once it stopped after playing something: the answer's.
    private func playedStats(_ stops: AsyncStream<BusSignal>, _ vf: VirtualFrame) async throws -> [String: Int] {
        try await within(.seconds(30), failure: { "the speaker never stopped after playing" }) {
            for await _ in stops {
                let stats = try await vf.speakerStats()
                if stats["played", default: 0] > 0 { return stats }
            }
            throw TestFailure("the virtual Halo went away")
        }
    }

    private func queryWith(_ bus: BusConnection, _ options: [DBusValue.DictEntry]) async throws -> [DBusValue] {
        try await bus.call(
            GlassdBus.name, path: GlassdBus.managerPath, interface: GlassdBus.managerInterface, member: "QueryWith",
            [.string(Self.question), .dict(key: "s", value: "v", options)], timeoutSeconds: 60)
    }

    @Test("QueryWith speak=true: spoken on the Halo, whole and none refused, the caller gets the whole answer; Query and speak=false are silent; an unknown option is InvalidArgs; glassctl query --speak speaks")
    func queryWithSpeaks() async throws {
        try await BLEWorld.with { ble in
            try await ble.withFrameSession(halo, halo: true) { bus, vf in
                try await ble.pairReady(halo, bus)
                let stops = try await bus.signals(SignalMatch(path: vf.path, interface: VirtualFrame.interface, member: "SpeakerStopped"))

                // Query, and QueryWith without speak: answered, shown, not spoken.
                let plain = try await ble.world.callManager("Query", "s", [Self.question], timeout: 60)
                #expect(busctlString(plain) == Self.answer, "\(plain.stderr)")
                try await vf.waitForDisplay(containing: Self.answer)
                #expect(try await queryWith(bus, [.init(.string("speak"), .variant(.bool(false)))]).first?.string == Self.answer)
                #expect(try await speechRequests(ble.world) == 0, "a typed question is spoken only when asked")

                // Options QueryWith does not take: refused before anything is asked.
                for bad: DBusValue.DictEntry in [
                    .init(.string("loud"), .variant(.bool(true))), .init(.string("speak"), .variant(.string("yes"))),
                ] {
                    do {
                        _ = try await queryWith(bus, [bad])
                        Issue.record("QueryWith(\(bad)) should fail")
                    } catch let error as BusError {
                        #expect(error.name == GlassdErrorName.invalidArgs, "\(error)")
                    }
                }

                // speak=true: the reply is the whole answer, once the speech has played out.
                let spoken = try await queryWith(bus, [.init(.string("speak"), .variant(.bool(true)))])
                #expect(spoken.first?.string == Self.answer)
                let stats = try await playedStats(stops, vf)
                #expect(try await speechRequests(ble.world) == 1)
                // Halo's speaker takes LC3 at 32 kbps: 4,000 bytes a second.
                let expected = Double(Self.answer.count) * 0.060 * 4_000
                let played = Double(stats["played", default: 0])
                #expect(played > expected * 0.95 && played < expected * 1.05, "\(stats)")
                #expect(stats["ble_rejected_bytes"] == 0, "\(stats)")

                // glassctl query --speak: QueryWith with speak (it replies once the speech has played).
                let run = try await ble.world.glassctl(["query", "--speak", Self.question])
                #expect(run.ok, "\(run.stderr)")
                #expect(run.stdout.contains(Self.answer), "\(run.stdout)")
                let again = try await vf.speakerStats()
                #expect(Double(again["played", default: 0] - stats["played", default: 0]) > expected * 0.95, "\(again)")
                #expect(again["ble_rejected_bytes"] == 0, "\(again)")
                #expect(try await speechRequests(ble.world) == 2, "\(ble.world.log().suffix(4000))")
            }
        }
    }

    @Test("a tap while a typed answer is spoken stops the speech only: the caller gets the whole answer, and History keeps it whole")
    func tapStopsSpeechOnly() async throws {
        try await BLEWorld.with { ble in
            try await ble.withFrameSession(halo, halo: true) { bus, vf in
                try await ble.pairReady(halo, bus)
                let fed = try await bus.signals(SignalMatch(path: vf.path, interface: VirtualFrame.interface, member: "SpeakerFed"))
                let stops = try await bus.signals(SignalMatch(path: vf.path, interface: VirtualFrame.interface, member: "SpeakerStopped"))
                // About 8 s of the fake voice's tone: time enough to tap in the middle.
                let question = "tell me of the mountains. They are tall. Some are very tall. Most are old. Tell me more."
                async let reply = bus.call(
                    GlassdBus.name, path: GlassdBus.managerPath, interface: GlassdBus.managerInterface, member: "QueryWith",
                    [.string(question), .dict(key: "s", value: "v", [.init(.string("speak"), .variant(.bool(true)))])], timeoutSeconds: 60)
                try await within(.seconds(30), failure: { "the speaker was never fed" }) {
                    for await _ in fed { return }
                    throw TestFailure("the virtual Halo went away")
                }
                // Half a second played: the tap comes while it speaks.
                try await vf.call("WaitPlayed", [.uint64(2_000)])
                try await vf.call("Tap")
                let answer = try await reply.first?.string
                #expect(answer == "echo: " + question)
                let stats = try await playedStats(stops, vf)
                let whole = Double(("echo: " + question).count) * 0.060 * 4_000
                #expect(Double(stats["played", default: 0]) < whole * 0.8, "the speech went on after the tap: \(stats)")
                let history = try await ble.world.glassctl(["history", "--json", "-n", "2"])
                let rows = try JSONSerialization.jsonObject(with: Data(history.stdout.utf8)) as? [[String: Any]]
                #expect(rows?.compactMap { $0["text"] as? String }.last == "echo: " + question, "\(history.stdout)")
            }
        }
    }

    @Test("[speech_out] speak = \"never\": a voice question on the Halo is answered and not spoken, nor a QueryWith speak=true")
    func neverSpeaks() async throws {
        try await BLEWorld.with { ble in
            let config = try ble.writeConfig()
            try (try String(contentsOfFile: config, encoding: .utf8) + "[speech_out]\nspeak = \"never\"\n")
                .write(toFile: config, atomically: true, encoding: .utf8)
            try await ble.withFrameSession(halo, halo: true, config: config) { bus, vf in
                try await ble.pairReady(halo, bus)
                try await vf.call("FeedAudio", [.string(try SpeechFixture.speech(in: ble.world.directory))])
                try await ble.world.setTranscript(Self.question)
                let signals = try await bus.signals(SignalMatch(path: GlassdBus.managerPath, interface: GlassdBus.managerInterface))
                try await vf.call("Tap")
                let ended = try await within(.seconds(60), failure: { "the voice question did not end" }) {
                    for await signal in signals
                    where signal.member == GlassdBus.Signal.answered || signal.member == GlassdBus.Signal.queryFailed {
                        return signal.member
                    }
                    throw TestFailure("signals ended")
                }
                #expect(ended == GlassdBus.Signal.answered)
                try await vf.waitForDisplay(containing: Self.answer)
                #expect(try await queryWith(bus, [.init(.string("speak"), .variant(.bool(true)))]).first?.string == Self.answer)
                #expect(try await speechRequests(ble.world) == 0)
                #expect(try await vf.speakerStats()["played", default: 0] == 0)
            }
        }
    }
}
