// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import Foundation
import GlassdAPI
import Monocle
import Testing

private let worldReady = BLEWorld.available || ProcessInfo.processInfo.environment["GLASSD_REQUIRE_BLE"] != nil
private let monocle = 3

/// Questions asked on the glasses, end to end: glassd, the fake BlueZ, a virtual Monocle running
/// the real scripts in MicroPython (its microphone fed from a recorded question), and the fake
/// OpenAI-compatible server, which transcribes to a text the test sets and checks the WAV.
@Suite("Voice and photo questions on a virtual Monocle", .timeLimit(.minutes(10)), .serialized, .enabled(if: worldReady, "the Python BLE world is not set up"))
struct VoiceTests {
    /// A paired, ready virtual Monocle, its microphone fed with the recorded question.
    private func withGlasses(_ body: (BLEWorld, BusConnection, VirtualMonocle) async throws -> Void) async throws {
        try await BLEWorld.with { ble in
            try await ble.withSession(monocle) { bus, vm in
                try await ble.pairReady(monocle, bus)
                try await vm.call("FeedAudio", [.string(try SpeechFixture.speech(in: ble.world.directory))])
                try await body(ble, bus, vm)
            }
        }
    }



    private func audioRequests(_ world: World) async throws -> [[String: Any]] {
        try await world.serverRequests().filter { ($0["path"] as? String)?.contains("/audio/") == true }
    }

    private func chatRequests(_ world: World) async throws -> [[String: Any]] {
        try await world.serverRequests().filter { ($0["path"] as? String)?.contains("/audio/") != true }
    }

    @Test("tap and speak: the recording stops at the end of speech, Transcribed, the answer streams onto the display word by word, history and the transcription row are kept")
    func tapSpeakAnswer() async throws {
        try await withGlasses { ble, bus, vm in
            try await ble.world.setTranscript("[slow] what is the time")
            let signals = try await questionSignals(bus)
            let writesBefore = ble.dataWrites(monocle).count
            try await vm.call("Tap")
            // The first words are on the glasses while the answer still streams (the fake
            // server sends it in six pieces 0.3 s apart).
            let first = try await vm.waitForDisplay(containing: "echo:", timeout: .seconds(60))
            #expect(!VirtualMonocle.reading(first).contains("echo: [slow] what is the time"), "\(first)")
            let seen = try await untilEnd(signals)
            let members = seen.map(\.member)
            #expect(members.first == GlassdBus.Signal.transcribed)
            #expect(members.last == GlassdBus.Signal.answered, "\(seen.map(\.arguments))")
            let id = try #require(seen.first?.arguments.first?.string)
            #expect(id.hasPrefix("glasses/"))
            #expect(seen.first?.arguments.last == .string("[slow] what is the time"))
            let answeredIndex = try #require(members.lastIndex(of: GlassdBus.Signal.answered))
            #expect(members[..<answeredIndex].filter { $0 == GlassdBus.Signal.answerDelta }.count >= 3)
            #expect(seen.allSatisfy { $0.arguments.first?.string == id })
            let answer = try #require(seen.last?.arguments.last?.string)
            try await vm.waitForDisplay(containing: "echo: [slow] what is the time")
            // Several res: writes carried it, in order, then end:.
            let writes = ble.dataWrites(monocle)[writesBefore...]
            let shown = writes.compactMap { if case .response(let text) = $0 { text } else { nil } }
            #expect(shown.count >= 3, "\(writes)")
            #expect(shown.joined().hasSuffix("time"))
            #expect(writes.contains(.stopRecording), "the end of speech did not stop the recording")
            #expect(writes.last == .answerEnd)

            // The WAV: 16 kHz mono 16-bit, the question and its trailing silence, far less than the 30 s cap.
            let audio = try #require(try await audioRequests(ble.world).last)
            #expect(audio["path"] as? String == "/v1/audio/transcriptions")
            #expect(audio["wav_rate"] as? Int == 16000)
            #expect(audio["wav_channels"] as? Int == 1)
            #expect(audio["wav_bits"] as? Int == 16)
            let seconds = try #require(audio["duration_s"] as? Double)
            #expect(seconds > 4 && seconds < 8, "recorded \(seconds) s")

            let history = try await ble.world.glassctl(["history", "--json", "-n", "2"])
            #expect(history.stdout.contains("[slow] what is the time"), "\(history.stdout)")
            #expect(history.stdout.contains(answer))
            let row = try await ble.world.sqlite("SELECT text, consumed_at IS NOT NULL FROM transcriptions WHERE id = '\(id)'")
            #expect(row == "[slow] what is the time|1")
            // The glasses are ready for the next question.
            let states = try await ble.world.glassctl(["status"])
            #expect(states.stdout.contains("glasses: ready"), "\(states.stdout)")
        }
    }

    @Test("the end of turn at a pause: eager transcripts at the pauses inside the question read unfinished and do not end it; the one at its end is the question, with no request after it")
    func eagerEndOfTurn() async throws {
        try await withGlasses { ble, bus, vm in
            // The recording's speech ends 4.34 s in; a recording cut at a pause inside it is at most
            // 4.27 s long (100 ms of silence, then speech again), one cut at its end at least 4.43 s.
            try await ble.world.setTranscript(
                "What's the weather in Paris tomorrow? Should I take an umbrella?", partial: "What's the weather in",
                below: 4.4)
            let asked = try await audioRequests(ble.world).count
            let signals = try await questionSignals(bus)
            let writesBefore = ble.dataWrites(monocle).count
            try await vm.call("Tap")
            let seen = try await untilEnd(signals)
            #expect(seen.first?.arguments.last == .string("What's the weather in Paris tomorrow? Should I take an umbrella?"))
            #expect(seen.last?.member == GlassdBus.Signal.answered, "\(seen.map(\.arguments))")
            #expect(ble.dataWrites(monocle)[writesBefore...].contains(.stopRecording), "glassd ended the turn")
            let requests = try await audioRequests(ble.world)[asked...]
            // The last one was sent at the pause after the speech (not after the 800 ms of silence that
            // a request at the end would hold), and its transcript was the question's.
            let seconds = try #require(requests.last?["duration_s"] as? Double)
            #expect(seconds >= 4.4 && seconds < 5.0, "\(requests.map { $0["duration_s"] ?? "?" })")
            #expect(requests.allSatisfy { $0["path"] as? String == "/v1/audio/transcriptions" })
        }
    }

    @Test("translator mode: the translations endpoint, no chat request, the translation shown and stored")
    func translator() async throws {
        try await withGlasses { ble, bus, vm in
            let mode = try await ble.world.glassctl(["mode", "translator"])
            #expect(mode.ok, "\(mode.stderr)")
            try await ble.world.setTranscript("wo ist die bibliothek")
            let chatsBefore = try await chatRequests(ble.world).count
            let signals = try await questionSignals(bus)
            try await vm.call("Tap")
            let seen = try await untilEnd(signals)
            #expect(seen.last?.member == GlassdBus.Signal.answered, "\(seen.map(\.arguments))")
            #expect(seen.last?.arguments.last == .string("translated: wo ist die bibliothek"))
            try await vm.waitForDisplay(containing: "translated: wo ist die bibliothek")
            #expect(try await audioRequests(ble.world).last?["path"] as? String == "/v1/audio/translations")
            #expect(try await chatRequests(ble.world).count == chatsBefore)
            let history = try await ble.world.glassctl(["history", "--json", "-n", "1"])
            #expect(history.stdout.contains("translated: wo ist die bibliothek"))
        }
    }

    @Test("hold: the photo and the spoken question go in one chat request with the same JPEG, which is kept and readable with Photo")
    func photoQuestion() async throws {
        try await withGlasses { ble, bus, vm in
            let jpeg = Paths.fixtures + "/photo.jpg"
            try await vm.call("FeedImage", [.string(jpeg)])
            try await ble.world.setTranscript("what is in front of me")
            let signals = try await questionSignals(bus)
            try await vm.call("Hold", [.double(1.5)])
            let seen = try await untilEnd(signals)
            #expect(seen.last?.member == GlassdBus.Signal.answered, "\(seen.map(\.arguments))")
            let id = try #require(seen.last?.arguments.first?.string)
            let chat = try #require(try await chatRequests(ble.world).last)
            let bytes = try #require(FileManager.default.contents(atPath: jpeg))
            #expect(chat["image_bytes"] as? Int == bytes.count)
            #expect(chat["image_sha256"] as? String == (try await ble.world.sha256(jpeg)))
            let saved = ble.world.directory + "/saved.jpg"
            let photo = try await ble.world.glassctl(["photo", id, saved])
            #expect(photo.ok, "\(photo.stderr)")
            #expect(FileManager.default.contents(atPath: saved) == bytes)
            let missing = try await ble.world.glassctl(["photo", "glasses/none", saved])
            #expect(missing.stderr.contains(GlassdErrorName.notFound), "\(missing.stderr)")
        }
    }

    @Test("questions are recorded at 16 kHz, a tap's (ast:) and a photo's (ist:): what the microphone hears above 4 kHz reaches the speech server, in the question's time")
    func sixteenKilohertz() async throws {
        try await withGlasses { ble, bus, vm in
            // espeak-ng at 22 kHz: its s and f sounds reach well past 4 kHz, which a recording made at
            // 8 kHz (or one read at the wrong rate) cannot hold.
            let spoken = try await SpeechFixture.spoken(
                "is it safe to cross the street here", in: ble.world.directory, as: "sixteen")
            try await vm.call("FeedImage", [.string(Paths.fixtures + "/photo.jpg")])
            for (index, start) in ["tap", "hold"].enumerated() {
                try await vm.call("FeedAudio", [.string(spoken)])
                try await ble.world.setTranscript("is it safe to cross the street here")
                let signals = try await questionSignals(bus)
                if start == "tap" { try await vm.call("Tap") } else { try await vm.call("Hold", [.double(1.5)]) }
                #expect(try await untilEnd(signals).last?.member == GlassdBus.Signal.answered, "\(start)")
                let audio = try await audioRequests(ble.world)
                #expect(audio.count == index + 1, "\(start)")
                let last = try #require(audio.last)
                let high = try #require(last["wav_high_band"] as? Double)
                // Measured: 2.4 % at 16 kHz; 0.014 % from the same words recorded at 8 kHz.
                #expect(high > 0.003, "\(start): \(last)")
                // The question (about 2 s) and the silence that ended it, not twice that.
                let seconds = try #require(last["duration_s"] as? Double)
                #expect(seconds > 1.5 && seconds < 5, "\(start): \(last)")
            }
        }
    }

    @Test("a refused key: red words on the glasses and QueryFailed; the next tap works")
    func unauthorized() async throws {
        try await withGlasses { ble, bus, vm in
            try await ble.world.setTranscript("[401] anything")
            let signals = try await questionSignals(bus)
            try await vm.call("Tap")
            let seen = try await untilEnd(signals)
            #expect(seen.last?.member == GlassdBus.Signal.queryFailed)
            #expect(seen.last?.arguments.dropFirst().first == .string(GlassdErrorName.unauthorized))
            try await vm.waitForDisplay(containing: "refused the API key")
            #expect(ble.dataWrites(monocle).contains { if case .error = $0 { true } else { false } })
            // The glasses took end: (a tap before it would cancel the failed answer).
            try await vm.waitForDisplay(containing: "Tap to speak")

            try await ble.world.setTranscript("and now")
            let again = try await questionSignals(bus)
            try await vm.call("Tap")
            #expect(try await untilEnd(again).last?.member == GlassdBus.Signal.answered)
            try await vm.waitForDisplay(containing: "echo: and now")
        }
    }

    @Test("a tap while the answer streams cancels it: Cancelled, nothing stored, and the glasses are ready again")
    func cancelTap() async throws {
        try await withGlasses { ble, bus, vm in
            try await ble.world.setTranscript("[slow] tell me a long story")
            let signals = try await questionSignals(bus)
            let before = try await ble.world.glassctl(["history", "--json", "-n", "100"]).stdout
            try await vm.call("Tap")
            let seen = try await within(.seconds(60), failure: { "no answer started" }) {
                var seen: [BusSignal] = []
                for await signal in signals {
                    seen.append(signal)
                    if signal.member == GlassdBus.Signal.answerDelta {
                        try await vm.call("Tap")
                    }
                    if signal.member == GlassdBus.Signal.queryFailed || signal.member == GlassdBus.Signal.answered { break }
                }
                return seen
            }
            #expect(seen.last?.member == GlassdBus.Signal.queryFailed, "\(seen.map(\.member))")
            #expect(seen.last?.arguments.dropFirst().first == .string(GlassdErrorName.cancelled))
            try await vm.waitForDisplay(containing: "Cancelled")
            let after = try await ble.world.glassctl(["history", "--json", "-n", "100"]).stdout
            #expect(after == before)
            try await ble.world.setTranscript("short one")
            let again = try await questionSignals(bus)
            try await vm.call("Tap")
            #expect(try await untilEnd(again).last?.member == GlassdBus.Signal.answered)
        }
    }

    @Test("silence: no request, a clear message on the glasses")
    func silence() async throws {
        try await withGlasses { ble, bus, vm in
            try await vm.call("FeedAudio", [.string(try SpeechFixture.silence(in: ble.world.directory))])
            let requests = try await ble.world.serverRequests().count
            let signals = try await questionSignals(bus)
            try await vm.waitForDisplay(containing: "Listening") { try await vm.call("Tap") }
            try await vm.call("Tap")
            let seen = try await untilEnd(signals)
            #expect(seen.last?.member == GlassdBus.Signal.queryFailed)
            #expect(seen.last?.arguments.dropFirst().first == .string(GlassdErrorName.noSpeech))
            try await vm.waitForDisplay(containing: "did not hear")
            #expect(try await ble.world.serverRequests().count == requests)
        }
    }

    @Test("a D-Bus Query is shown on the idle glasses as it streams")
    func queryShownOnGlasses() async throws {
        try await withGlasses { ble, _, vm in
            try await vm.waitForDisplay(containing: "echo: from the desk") {
                let result = try await ble.world.glassctl(["query", "from the desk"])
                #expect(result.ok, "\(result.stderr)")
            }
            #expect(ble.dataWrites(monocle).last == .answerEnd)
            let status = try await ble.world.glassctl(["status"])
            #expect(status.stdout.contains("glasses: ready"), "\(status.stdout)")
        }
    }

    @Test("the link drops while recording: NotConnected; after the reconnect the next tap works")
    func dropWhileRecording() async throws {
        try await withGlasses { ble, bus, vm in
            let signals = try await questionSignals(bus)
            try await vm.waitForDisplay(containing: "Listening") { try await vm.call("Tap") }
            _ = try await ble.bluez(["call", "org.bluez", "/org/bluezoo", "org.bluezoo.Test1", "DropLink", "s", BLEWorld.adapterAddress(monocle)])
            let seen = try await untilEnd(signals)
            #expect(seen.last?.member == GlassdBus.Signal.queryFailed)
            #expect(seen.last?.arguments.dropFirst().first == .string(GlassdErrorName.notConnected))
            try await vm.waitForDisplay(containing: "Tap to speak", timeout: .seconds(60))
            try await ble.world.setTranscript("after the drop")
            let again = try await questionSignals(bus)
            try await vm.call("Tap")
            #expect(try await untilEnd(again).last?.member == GlassdBus.Signal.answered)
        }
    }

    @Test("the link drops while the answer streams: NotConnected, nothing stored; after the reconnect the next tap works")
    func dropWhileAnswering() async throws {
        try await withGlasses { ble, bus, vm in
            try await ble.world.setTranscript("[slow] a long answer please")
            let before = try await ble.world.glassctl(["history", "--json", "-n", "100"]).stdout
            let signals = try await questionSignals(bus)
            try await vm.call("Tap")
            let seen = try await within(.seconds(60), failure: { "no answer started" }) {
                var seen: [BusSignal] = []
                var dropped = false
                for await signal in signals {
                    seen.append(signal)
                    if signal.member == GlassdBus.Signal.answerDelta && !dropped {
                        dropped = true
                        _ = try await ble.bluez([
                            "call", "org.bluez", "/org/bluezoo", "org.bluezoo.Test1", "DropLink", "s", BLEWorld.adapterAddress(monocle),
                        ])
                    }
                    if signal.member == GlassdBus.Signal.queryFailed || signal.member == GlassdBus.Signal.answered { break }
                }
                return seen
            }
            #expect(seen.last?.member == GlassdBus.Signal.queryFailed, "\(seen.map(\.member))")
            #expect(seen.last?.arguments.dropFirst().first == .string(GlassdErrorName.notConnected))
            #expect(try await ble.world.glassctl(["history", "--json", "-n", "100"]).stdout == before)
            try await vm.waitForDisplay(containing: "Tap to speak", timeout: .seconds(60))
            try await ble.world.setTranscript("after the drop")
            let again = try await questionSignals(bus)
            try await vm.call("Tap")
            #expect(try await untilEnd(again).last?.member == GlassdBus.Signal.answered)
        }
    }
}
