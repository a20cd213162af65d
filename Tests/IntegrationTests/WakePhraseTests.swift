// SPDX-License-Identifier: GPL-2.0-or-later
import Audio
import DBusKit
import Foundation
import GlassdAPI
import Testing

private let worldReady = BLEWorld.available || ProcessInfo.processInfo.environment["GLASSD_REQUIRE_BLE"] != nil
private let monocle = 2
private let frame = 3

/// The wake phrase end to end: espeak-ng speaks into the virtual Monocle's microphone (streamed
/// to glassd while the glasses are idle) or into a stand-in for the host's recorder; glassd's
/// spotter (pocketsphinx) hears "hey glasses" or does not.
@Suite(
    "Wake phrase: heard on the glasses' or the host's microphone, it starts a question as a tap would", .timeLimit(.minutes(6)),
    .serialized, .enabled(if: worldReady, "the BLE world is not set up (Tests/World/setup)"))
struct WakePhraseTests {
    static let lead =
        "the bus was late this morning. please turn left at the next junction and park behind the shop. the weather forecast promises rain for the whole week."

    /// espeak-ng saying `text` in a voice the spotter hears well, into a WAV file in `directory`.
    static func speak(_ text: String, in directory: String, as name: String) async throws -> String {
        try await SpeechFixture.spoken(text, voice: "en-us+klatt", in: directory, as: name)
    }

    private func config(_ ble: BLEWorld, source: String) throws -> String {
        let path = try ble.writeConfig()
        try (try String(contentsOfFile: path, encoding: .utf8) + "[wake]\nphrase = \"Hey, glasses\"\nsource = \"\(source)\"\n")
            .write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test("glasses: idle glasses stream what they hear; speech without the phrase starts nothing, the phrase after it starts a question on the glasses, saying so, and it is answered")
    func onTheGlasses() async throws {
        try await BLEWorld.with { ble in
            try await ble.withSession(monocle, config: try config(ble, source: "glasses")) { bus, vm in
                try await ble.pairReady(monocle, bus)
                // Speech alone: all of it heard (the spotter decoded past it), no wake, no question.
                let plain = try await Self.speak(Self.lead, in: ble.world.directory, as: "plain")
                let seconds = try wavSeconds(plain)
                // Listening since the glasses became ready: the speech is heard from now on.
                let before = try await wakeStatus(bus, after: {}) { $0["state"]?.string == "listening" }
                // Reported every ten seconds of audio, so `before` may be ten behind: a margin of that.
                let target = (before["listened_seconds"]?.uint64Value ?? 0) + UInt64(seconds) + 12
                let heard = try await wakeStatus(bus, after: { try await vm.call("FeedAudio", [.string(plain)]) }) {
                    ($0["listened_seconds"]?.uint64Value ?? 0) >= target
                }
                #expect(heard["heard"]?.uint32 == 0, "\(heard)")
                #expect(heard["phrase"]?.string == "hey glasses" && heard["source"]?.string == "glasses", "\(heard)")
                #expect(!(try await vm.displayText()).contains("Heard"))

                // The same speech, then the phrase: a question starts as on a tap, and is answered.
                let woken = try await Self.speak(Self.lead + " hey glasses.", in: ble.world.directory, as: "woken")
                let seen = try await nextQuestion(bus, timeout: .seconds(90)) {
                    try await vm.waitForDisplay(containing: "Heard \"hey glasses\"", timeout: .seconds(60)) {
                        try await vm.call("FeedAudio", [.string(woken)])
                    }
                    // What the glasses hear now is the question (the virtual microphone plays the
                    // file again from its start); silence ends it.
                }
                #expect(seen.last?.member == GlassdBus.Signal.answered, "\(seen.map(\.member))")
                let after = try await wakeNow(bus)
                #expect((after["heard"]?.uint32 ?? 0) >= 1, "\(after)")
            }
        }
    }

    @Test("glasses: a Frame streams what it hears (8 kHz, 8-bit) while idle or showing pages; the phrase starts a question there, saying so, and it is answered")
    func onAFrame() async throws {
        try await BLEWorld.with { ble in
            try await ble.withFrameSession(frame, config: try config(ble, source: "glasses")) { bus, vf in
                try await ble.pairReady(frame, bus)
                _ = try await wakeStatus(bus, after: {}) { $0["state"]?.string == "listening" }
                let woken = try await Self.speak(Self.lead + " hey glasses.", in: ble.world.directory, as: "frame-woken")
                let seen = try await nextQuestion(bus, timeout: .seconds(90)) {
                    try await vf.waitForDisplay(containing: "Heard \"hey glasses\"", timeout: .seconds(60)) {
                        try await vf.call("FeedAudio", [.string(woken)])
                    }
                }
                #expect(seen.last?.member == GlassdBus.Signal.answered, "\(seen.map(\.member))")

                // Pages being read listen too: the phrase asks the next question over them.
                let asked = try await ble.world.callManager("Query", "s", ["[longlist] the months"])
                #expect(asked.ok, "\(asked.stderr)")
                try await vf.waitForDisplay(containing: "Tap for more")
                let next = try await nextQuestion(bus, timeout: .seconds(90)) {
                    try await vf.waitForDisplay(containing: "Heard \"hey glasses\"", timeout: .seconds(60)) {
                        try await vf.call("FeedAudio", [.string(woken)])
                    }
                }
                #expect(next.last?.member == GlassdBus.Signal.answered, "\(next.map(\.member))")
                #expect((try await wakeNow(bus)["heard"]?.uint32 ?? 0) >= 2)
            }
        }
    }

    @Test("host: a stand-in for the host's recorder plays speech ending in the phrase: one wake, and a question on the glasses; again over a laid-out answer's pages")
    func onTheHost() async throws {
        try await BLEWorld.with { ble in
            let dir = ble.world.directory
            // 16 kHz s16 raw, as arecord would record it: the speech (resampled as glassd does),
            // then 3 s of silence.
            let spoken = try await Self.speak(Self.lead + " hey glasses.", in: dir, as: "host")
            let raw = dir + "/host.raw"
            let (samples, rate) = try WAV.decode(Array(try Data(contentsOf: URL(fileURLWithPath: spoken))))
            let host = try PCMConverter.resample(samples, from: rate, to: 16_000) + [Int16](repeating: 0, count: 3 * 16_000)
            try host.withUnsafeBytes { Data($0) }.write(to: URL(fileURLWithPath: raw))
            // The stand-in for arecord plays it in real time, as a microphone would, each time
            // the test says so through a FIFO (silence in between: nothing is written).
            let go = dir + "/go"
            #expect(mkfifo(go, 0o600) == 0)
            let bin = dir + "/bin"
            try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
            try """
                #!/usr/bin/env python3
                import sys, time
                data = open('\(raw)', 'rb').read()
                while True:
                    with open('\(go)') as go:
                        go.read(1)
                    start = time.monotonic()
                    for at in range(0, len(data), 640):
                        sys.stdout.buffer.write(data[at:at + 640]); sys.stdout.flush()
                        time.sleep(max(0, start + (at + 640) / 32000 - time.monotonic()))
                """.write(toFile: bin + "/arecord", atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: bin + "/arecord")
            // glassd looks for its recorder there (not in PATH), and finds a capture device in
            // this stand-in for /dev: the host's audio is reachable.
            try FileManager.default.createDirectory(atPath: dir + "/dev/snd", withIntermediateDirectories: true)
            FileManager.default.createFile(atPath: dir + "/dev/snd/pcmC0D0c", contents: Data())
            let environment = ["GLASSD_AUDIO_TOOLS_DIR": bin, "GLASSD_AUDIO_DEV_DIR": dir + "/dev"]
            try await ble.withSession(monocle, config: try config(ble, source: "host"), environment: environment) { bus, vm in
                try await ble.pairReady(monocle, bus)
                // The question itself is recorded by the glasses, as after a tap.
                try await vm.call("FeedAudio", [.string(try await Self.speak("what is the tallest mountain", in: dir, as: "question"))])
                // Opening a FIFO blocks until its reader has it: on a thread of its own.
                let play: @Sendable () -> Void = {
                    Thread.detachNewThread { FileHandle(forWritingAtPath: go)?.write(Data("g".utf8)) }
                }
                let seen = try await nextQuestion(bus, timeout: .seconds(90)) {
                    try await vm.waitForDisplay(containing: "Heard \"hey glasses\"", timeout: .seconds(60)) { play() }
                }
                #expect(seen.last?.member == GlassdBus.Signal.answered, "\(seen.map(\.member))")
                let status = try await wakeNow(bus)
                #expect(status["heard"]?.uint32 == 1, "one wake, on the phrase, not in the speech before it: \(status)")
                #expect(status["source"]?.string == "host" && status["state"]?.string == "listening", "\(status)")

                // While a laid-out answer's pages show, the phrase asks the next question over them.
                let asked = try await ble.world.callManager("Query", "s", ["[longlist] the months"])
                #expect(asked.ok, "\(asked.stderr)")
                try await vm.waitForDisplay(containing: "Tap for more")
                let next = try await nextQuestion(bus, timeout: .seconds(90)) {
                    try await vm.waitForDisplay(containing: "Heard \"hey glasses\"", timeout: .seconds(60)) { play() }
                }
                #expect(next.last?.member == GlassdBus.Signal.answered, "\(next.map(\.member))")
                #expect(try await wakeNow(bus)["heard"]?.uint32 == 2)
            }
            #expect(ble.world.log().contains("listening on the host's microphone through \(bin)/arecord"))
        }
    }

    private func wavSeconds(_ path: String) throws -> Double {
        let (samples, rate) = try WAV.decode(Array(try Data(contentsOf: URL(fileURLWithPath: path))))
        return Double(samples.count) / Double(rate)
    }

    private func wakeNow(_ bus: BusConnection) async throws -> [String: DBusValue] {
        try await bus.call(
            GlassdBus.name, path: GlassdBus.managerPath, interface: "org.freedesktop.DBus.Properties", member: "Get",
            [.string(GlassdBus.managerInterface), .string(GlassdBus.Property.wake)]
        ).first?.unwrapped.stringKeyed ?? [:]
    }

    /// Manager1.Wake once `done` holds for it (read on PropertiesChanged, no polling), after `action`.
    private func wakeStatus(
        _ bus: BusConnection, after action: () async throws -> Void, until done: @escaping @Sendable ([String: DBusValue]) -> Bool
    ) async throws -> [String: DBusValue] {
        let changes = try await bus.signals(
            SignalMatch(path: GlassdBus.managerPath, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"))
        try await action()
        let now = try await wakeNow(bus)
        if done(now) { return now }
        return try await within(.seconds(60), failure: { "Wake never got there: \((try? await wakeNow(bus)) ?? [:])" }) {
            for await change in changes {
                guard let changed = change.arguments.dropFirst().first?.stringKeyed,
                    let wake = changed[GlassdBus.Property.wake]?.unwrapped.stringKeyed
                else { continue }
                if done(wake) { return wake }
            }
            throw TestFailure("signals ended")
        }
    }
}

extension DBusValue {
    fileprivate var uint64Value: UInt64? {
        if case .uint64(let value) = unwrapped { value } else { nil }
    }
}

/// `glassd --check-wake`: what a user runs on their own recording before glassd listens with a
/// phrase, and what Scripts/bench-wake measures with.
@Suite("glassd --check-wake: where a recording says the phrase", .timeLimit(.minutes(5)))
struct WakeCheckTests {
    @Test("speech with the phrase: one wake, after the speech before it; without: none; a file that is no WAV: a clear error")
    func checks() async throws {
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        func spoken(_ text: String, _ name: String) async throws -> String {
            try await WakePhraseTests.speak(text, in: directory, as: name)
        }
        let config = directory + "/glassd.conf"
        try "[wake]\nphrase = \"hey glasses\"\n".write(toFile: config, atomically: true, encoding: .utf8)
        let lead = "the bus was late this morning. please turn left at the next junction and park behind the shop."
        let woken = try await runCommand(Paths.glassd, ["--config", config, "--check-wake", try await spoken(lead + " hey glasses.", "woken")])
        #expect(woken.ok, "\(woken.stderr)")
        let lines = woken.stdout.split(separator: "\n")
        #expect(lines.last == "1 wake(s) on \"hey glasses\" (normal)", "\(woken.stdout)")
        // The lead takes about five seconds: the wake is at the phrase, past it.
        #expect((Double(lines.first ?? "") ?? 0) > 4, "\(woken.stdout)")

        let plain = try await runCommand(Paths.glassd, ["--config", config, "--check-wake", try await spoken(lead, "plain")])
        #expect(plain.stdout == "0 wake(s) on \"hey glasses\" (normal)\n", "\(plain.stdout) \(plain.stderr)")

        try "not audio".write(toFile: directory + "/bad.wav", atomically: true, encoding: .utf8)
        let bad = try await runCommand(Paths.glassd, ["--config", config, "--check-wake", directory + "/bad.wav"])
        #expect(!bad.ok && bad.stderr.contains("not a WAV file"), "\(bad.stderr)")
    }
}
