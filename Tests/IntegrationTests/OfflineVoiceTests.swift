// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import Foundation
import GlassdAPI
import Testing

private let worldReady = BLEWorld.available || ProcessInfo.processInfo.environment["GLASSD_REQUIRE_BLE"] != nil
private let monocle = 2
private let halo = 3

/// The glasses' main loop offline: Scripts/backend's two servers (SmolLM2-135M on llama.cpp, and
/// Whisper tiny.en), glassd configured as Scripts/run configures it, a virtual Monocle whose
/// microphone hears espeak-ng speak each question, and a tap.
@Suite(
    "Offline voice: a question spoken on the glasses, heard and answered by the embedded backends", .timeLimit(.minutes(10)),
    .serialized, .enabled(if: worldReady && EmbeddedBackend.ready, "the BLE world or the embedded backend is not set up"))
struct OfflineVoiceTests {
    /// The link tests' glassd.conf with the embedded servers, as Scripts/run writes it
    /// (`translates`: when Scripts/backend says Whisper base translates).
    private func config(_ ble: BLEWorld, _ servers: EmbeddedBackend.Servers, translates: Bool = false) throws -> String {
        let path = try ble.writeConfig()
        var text = try String(contentsOfFile: path, encoding: .utf8)
        text = text.replacingOccurrences(of: ble.world.serverURL, with: servers.url)
        text = text.replacingOccurrences(
            of: "[assistant]\n",
            with: "[assistant]\nembedded = true\nchat_model = \"\(servers.model)\"\ntranscription_model = \"\(servers.speechModel)\"\n")
        text = text.replacingOccurrences(of: "chat_model = \"fake-model\"\n", with: "")
        // As Scripts/run writes it: a tiny model on two busy cores may take more than the tests' 10 s.
        text = text.replacingOccurrences(of: "timeout_seconds = 10\n", with: "timeout_seconds = 60\n")
        guard text.contains("timeout_seconds = 60\n") else { throw TestFailure("no timeout_seconds to raise in \(text)") }
        text += "[transcription]\nbase_url = \"\(servers.speechURL)\"\nembedded = true\n"
        if translates { text += "translates = true\n" }
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test("two spoken questions: Transcribed carries their words, SmolLM2's answer streams onto the display, History keeps both turns; translator mode, without [transcription] translates (a backend with no Whisper base), is NotConfigured")
    func spokenQuestions() async throws {
        try await BLEWorld.with { ble in
            try await EmbeddedBackend.withServers(in: ble.world.directory) { _, servers in
                #expect(servers.speechModel == "whisper-tiny.en")
                try await ble.withSession(monocle, config: try config(ble, servers)) { bus, vm in
                    #expect(ble.world.log().contains("embedded speech model"))
                    try await ble.pairReady(monocle, bus)
                    let backend = try await glassdManagerProperty(bus, GlassdBus.Property.backend)
                    #expect(backend.contains(servers.model) && backend.contains("speech: ") && backend.contains(servers.speechModel), "\(backend)")
                    // Nothing leaves the machine, though local_only is not set.
                    #expect(try await glassdManagerProperty(bus, GlassdBus.Property.privacy) == "local")
                    for (index, (text, words)) in [
                        ("what is the capital of france", ["capital", "france"]), ("how far away is the moon", ["far", "moon"]),
                    ].enumerated() {
                        try await vm.call("FeedAudio", [.string(try await SpeechFixture.spoken(text, in: ble.world.directory, as: "q\(index)"))])
                        let seen = try await nextQuestion(bus, timeout: .seconds(120)) { try await vm.call("Tap") }
                        let heard = seen.first { $0.member == GlassdBus.Signal.transcribed }?.arguments.dropFirst().first?.string ?? ""
                        for word in words { #expect(heard.lowercased().contains(word), "\(text) was heard as \"\(heard)\"") }
                        #expect(seen.last?.member == GlassdBus.Signal.answered, "\(seen.last?.arguments ?? [])")
                        let answer = seen.last?.arguments.last?.string ?? ""
                        #expect(!answer.isEmpty && !answer.hasPrefix("echo:"), "\(answer)")
                        #expect(seen.filter { $0.member == GlassdBus.Signal.answerDelta }.count > 1, "the answer was not streamed")
                        // A long answer scrolls on the display: its last word is what stays in view. One
                        // in plain ASCII: the glasses' font has no accents, so "lumière" shows as "lumiere".
                        let lastWord = answer.split { !$0.isLetter }.last { $0.count >= 3 && $0.allSatisfy(\.isASCII) }.map(String.init) ?? ""
                        #expect(!lastWord.isEmpty, "\(answer)")
                        try await vm.waitForDisplay(containing: lastWord)
                    }
                    let history = try await ble.world.glassctl(["history", "--json", "-n", "10"]).stdout
                    #expect(history.lowercased().contains("france") && history.lowercased().contains("moon"), "\(history)")
                    let turns = (try? JSONSerialization.jsonObject(with: Data(history.utf8))) as? [[String: Any]] ?? []
                    #expect(turns.count == 4, "\(history)")

                    _ = try await bus.call(
                        GlassdBus.name, path: GlassdBus.managerPath, interface: "org.freedesktop.DBus.Properties", member: "Set",
                        [.string(GlassdBus.managerInterface), .string(GlassdBus.Property.mode), .variant(.string("translator"))])
                    let translated = try await nextQuestion(bus, timeout: .seconds(120)) { try await vm.call("Tap") }
                    #expect(translated.last?.member == GlassdBus.Signal.queryFailed)
                    #expect(translated.last?.arguments.dropFirst().first == .string(GlassdErrorName.notConfigured))
                    try await vm.waitForDisplay(containing: "only English")
                }
            }
        }
    }

    @Test("translator mode with nothing configured: a Spanish question on a virtual Halo (LC3, 16 kHz) comes back in English, translated by the embedded Whisper base")
    func translatesOffline() async throws {
        try await BLEWorld.with { ble in
            try await EmbeddedBackend.withServers(in: ble.world.directory) { _, servers in
                #expect(servers.translationModel == "whisper-base")
                let config = try config(ble, servers, translates: !servers.translationModel.isEmpty)
                try await ble.withFrameSession(halo, halo: true, config: config) { bus, vf in
                    try await ble.pairReady(halo, bus)
                    _ = try await bus.call(
                        GlassdBus.name, path: GlassdBus.managerPath, interface: "org.freedesktop.DBus.Properties", member: "Set",
                        [.string(GlassdBus.managerInterface), .string(GlassdBus.Property.mode), .variant(.string("translator"))])
                    let question = try await SpeechFixture.spoken(
                        "¿dónde está la estación de tren?", voice: "es", in: ble.world.directory, as: "es")
                    try await vf.call("FeedAudio", [.string(question)])
                    let seen = try await nextQuestion(bus, timeout: .seconds(120)) { try await vf.call("Tap") }
                    #expect(seen.last?.member == GlassdBus.Signal.answered, "\(seen.last?.arguments ?? [])")
                    let answer = seen.last?.arguments.last?.string?.lowercased() ?? ""
                    #expect(answer.contains("where") && answer.contains("station"), "\(answer)")
                    try await vf.waitForDisplay(containing: "station")
                }
            }
        }
    }

    private func glassdManagerProperty(_ bus: BusConnection, _ name: String) async throws -> String {
        try await bus.call(
            GlassdBus.name, path: GlassdBus.managerPath, interface: "org.freedesktop.DBus.Properties", member: "Get",
            [.string(GlassdBus.managerInterface), .string(name)]
        ).first?.unwrapped.string ?? ""
    }
}
