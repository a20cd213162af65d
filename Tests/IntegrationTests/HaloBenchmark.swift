// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import Foundation
import GlassdAPI
import Testing

/// The measurements of Scripts/bench-halo (numbers, not a test: it runs only with
/// GLASSD_BENCH_HALO=1). glassd and a virtual Halo: spoken answers with the fake server's voice
/// (a tone, answered at once) and with the embedded espeak-ng, each timed from the end of the
/// first sentence in the stream to its first audio written to the speaker (glassd's log,
/// `first_audio_ms`); and taps during speech, from the tap to the last audio byte the Halo
/// received. Each result is one line `bench-halo: {json}`.
@Suite(
    "Halo benchmark", .serialized, .timeLimit(.minutes(10)),
    .enabled(if: ProcessInfo.processInfo.environment["GLASSD_BENCH_HALO"] == "1"))
struct HaloBenchmark {
    private static let halo = 3
    private static let answers = Int(ProcessInfo.processInfo.environment["GLASSD_BENCH_ANSWERS"] ?? "") ?? 8

    private static func emit(_ object: [String: Any]) {
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else { return }
        print("bench-halo: " + String(decoding: data, as: UTF8.self))
    }

    private static func percentile(_ values: [Double], _ p: Double) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return .nan }
        return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * p).rounded()))]
    }

    /// glassd's first_audio_ms of each spoken answer so far.
    private static func firstAudio(_ log: String) -> [Double] {
        log.split(separator: "\n").compactMap { line in
            guard line.contains("answer spoken"), let range = line.range(of: "first_audio_ms=") else { return nil }
            return Double(line[range.upperBound...].prefix { $0.isNumber })
        }
    }

    /// Asks `count` questions by tap, each answer spoken to its end.
    private static func speak(_ count: Int, ble: BLEWorld, bus: BusConnection, vf: VirtualFrame) async throws {
        let stops = try await bus.signals(SignalMatch(path: vf.path, interface: VirtualFrame.interface, member: "SpeakerStopped"))
        for i in 0..<count {
            try await ble.world.setTranscript("question \(i). What is the tallest mountain? Tell me more")
            let signals = try await bus.signals(SignalMatch(path: GlassdBus.managerPath, interface: GlassdBus.managerInterface))
            let before = try await vf.speakerStats()["played", default: 0]
            try await vf.call("Tap")
            try await within(.seconds(60), failure: { "question \(i) did not end" }) {
                for await signal in signals where signal.member == GlassdBus.Signal.answered || signal.member == GlassdBus.Signal.queryFailed {
                    return
                }
            }
            try await within(.seconds(60), failure: { "answer \(i) was not spoken" }) {
                for await _ in stops where try await vf.speakerStats()["played", default: 0] > before { return }
            }
        }
    }

    @Test("first audio after the first sentence, with the fake voice and with espeak-ng; a tap to the last audio byte")
    func spoken() async throws {
        try await BLEWorld.with { ble in
            try await ble.withFrameSession(Self.halo, halo: true) { bus, vf in
                try await ble.pairReady(Self.halo, bus)
                try await vf.call("FeedAudio", [.string(try SpeechFixture.speech(in: ble.world.directory))])
                try await Self.speak(Self.answers, ble: ble, bus: bus, vf: vf)
                let fake = Self.firstAudio(ble.world.log())
                Self.emit([
                    "voice": "fake (answers at once)", "answers": fake.count,
                    "first_audio_ms_p50": Self.percentile(fake, 0.5), "first_audio_ms_max": fake.max() ?? .nan,
                ])

                // Taps while the answer speaks (a slow voice: 300 ms a character).
                try await ble.world.setSpeech(["ms_per_char": 300])
                let started = try await bus.signals(SignalMatch(path: vf.path, interface: VirtualFrame.interface, member: "SpeakerStarted"))
                var tapToLast: [Double] = []
                for i in 0..<Self.answers {
                    try await ble.world.setTranscript("long answer \(i)")
                    try await vf.call("Tap")
                    try await within(.seconds(60), failure: { "the speaker did not start" }) { for await _ in started { return } }
                    let played = try await vf.speakerStats()["played", default: 0]
                    try await vf.call("WaitPlayed", [.uint64(UInt64(played + 2_000))])
                    let signals = try await bus.signals(SignalMatch(path: GlassdBus.managerPath, interface: GlassdBus.managerInterface))
                    try await vf.call("Tap")
                    // The tap asks the next question: let it end before the next round.
                    try await within(.seconds(60), failure: { "the tap's question did not end" }) {
                        for await signal in signals where signal.member == GlassdBus.Signal.answered || signal.member == GlassdBus.Signal.queryFailed {
                            return
                        }
                    }
                    // Its spoken answer starts the speaker again: the Halo has measured the tap then.
                    try await within(.seconds(60), failure: { "the next answer did not start" }) { for await _ in started { return } }
                    tapToLast.append(Double(try await vf.speakerStats()["tap_to_last_write_us", default: 0]) / 1000)
                }
                Self.emit([
                    "taps": tapToLast.count, "tap_to_last_write_ms_p50": Self.percentile(tapToLast, 0.5),
                    "tap_to_last_write_ms_max": tapToLast.max() ?? .nan,
                ])
            }
        }
    }

    @Test("barge-in by voice: the wearer's first word (fed over the answer) to the speaker stopping")
    func voiceBargeIn() async throws {
        try await BLEWorld.with { ble in
            try await ble.withFrameSession(Self.halo, halo: true) { bus, vf in
                try await ble.pairReady(Self.halo, bus)
                let clip = try SpeechFixture.speech(in: ble.world.directory)
                try await vf.call("FeedAudio", [.string(clip)])
                try await ble.world.setSpeech(["ms_per_char": 300])
                try await ble.world.setTranscript("long answer 0")
                let started = try await bus.signals(SignalMatch(path: vf.path, interface: VirtualFrame.interface, member: "SpeakerStarted"))
                try await vf.call("Tap")
                var stops: [Double] = []
                let clock = ContinuousClock()
                for i in 0..<Self.answers {
                    // An answer speaks (the tap's, then each barge-in's own question's).
                    try await within(.seconds(60), failure: { "the speaker did not start" }) { for await _ in started { return } }
                    let played = try await vf.speakerStats()["played", default: 0]
                    try await vf.call("WaitPlayed", [.uint64(UInt64(played + 2_000))])
                    try await ble.world.setTranscript("long answer \(i + 1)")
                    let stopped = try await bus.signals(SignalMatch(path: vf.path, interface: VirtualFrame.interface, member: "SpeakerStopped"))
                    let fed = clock.now
                    try await vf.call("FeedAudio", [.string(clip)])
                    try await within(.seconds(30), failure: { "the voice did not stop the speech" }) { for await _ in stopped { return } }
                    // The clip's first word comes 1 s after its start.
                    stops.append(((clock.now - fed) - .seconds(1)) / .milliseconds(1))
                }
                Self.emit([
                    "barge_ins": stops.count, "voice_to_stop_ms_p50": Self.percentile(stops, 0.5),
                    "voice_to_stop_ms_max": stops.max() ?? .nan,
                ])
            }
        }
    }

    @Test("first audio after the first sentence with the embedded espeak-ng", .enabled(if: EmbeddedBackend.ready))
    func espeak() async throws {
        try await BLEWorld.with { ble in
            try await EmbeddedBackend.withSpeech(in: ble.world.directory) { _, url, _ in
                let config = try ble.writeConfig()
                let text = try String(contentsOfFile: config, encoding: .utf8)
                try (text + "[speech_out]\nbase_url = \"\(url)\"\nmodel = \"espeak-ng\"\n").write(toFile: config, atomically: true, encoding: .utf8)
                try await ble.withFrameSession(Self.halo, halo: true, config: config) { bus, vf in
                    try await ble.pairReady(Self.halo, bus)
                    try await vf.call("FeedAudio", [.string(try SpeechFixture.speech(in: ble.world.directory))])
                    try await Self.speak(Self.answers, ble: ble, bus: bus, vf: vf)
                    let espeak = Self.firstAudio(ble.world.log())
                    Self.emit([
                        "voice": "espeak-ng (embedded)", "answers": espeak.count,
                        "first_audio_ms_p50": Self.percentile(espeak, 0.5), "first_audio_ms_max": espeak.max() ?? .nan,
                    ])
                }
            }
        }
    }
}
