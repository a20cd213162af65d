// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import Foundation
import GlassdAPI
import Testing

private let worldReady = BLEWorld.available || ProcessInfo.processInfo.environment["GLASSD_REQUIRE_BLE"] != nil
private let monocle = 3

/// The embedded default backend serves a text model and no speech: glassd, told so by
/// `[assistant] embedded = true`, fails what it cannot do at once and says what to configure,
/// rather than sending requests that end in the server's 404 or 500. The world's fake server
/// stands in for the backend's URL, so the tests can see that no request reached it.
@Suite(
    "What the embedded default backend cannot do, on a virtual Monocle", .timeLimit(.minutes(10)), .serialized,
    .enabled(if: worldReady, "the Python BLE world is not set up"))
struct EmbeddedLimitsTests {
    /// glassd.conf as the link tests write it, marked embedded, with a speech server or without.
    private func embeddedConfig(_ ble: BLEWorld, speechServer: Bool) throws -> String {
        let path = try ble.writeConfig()
        var text = try String(contentsOfFile: path, encoding: .utf8)
        text = text.replacingOccurrences(of: "[assistant]\n", with: "[assistant]\nembedded = true\n")
        if speechServer { text += "[transcription]\nbase_url = \"\(ble.world.serverURL)\"\n" }
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test("no speech server: a spoken question fails NotConfigured before any request, and the glasses say what is missing")
    func cannotHear() async throws {
        try await BLEWorld.with { ble in
            try await ble.withSession(monocle, config: try embeddedConfig(ble, speechServer: false)) { bus, vm in
                try await ble.pairReady(monocle, bus)
                let before = try await ble.world.serverRequests().count
                var seen: [BusSignal] = []
                // On a loaded run the virtual Monocle can fall silent past glassd's 10 s and the
                // recording breaks off (NoSpeech, "Tap to try again"); the wearer taps again, as told.
                for _ in 0..<3 {
                    try await vm.call("FeedAudio", [.string(try SpeechFixture.speech(in: ble.world.directory))])
                    try await vm.waitForDisplay(containing: "Tap to speak")
                    seen = try await nextQuestion(bus) { try await vm.call("Tap") }
                    let brokeOff = seen.last?.arguments.dropFirst(2).first?.string?.contains("stopped sending the recording") == true
                    if !brokeOff { break }
                }
                #expect(seen.last?.member == GlassdBus.Signal.queryFailed, "\(seen.map(\.arguments))")
                #expect(seen.last?.arguments.dropFirst().first == .string(GlassdErrorName.notConfigured))
                let message = seen.last?.arguments.dropFirst(2).first?.string ?? ""
                #expect(message.contains("[transcription] base_url"), "\(message)")
                try await vm.waitForDisplay(containing: "cannot hear")
                #expect(try await ble.world.serverRequests().count == before)
                // Typed questions still go to the model.
                let typed = try await ble.world.glassctl(["query", "still there?"])
                #expect(typed.ok && typed.stdout.contains("echo: still there?"), "\(typed.stderr)")
            }
        }
    }

    @Test("a speech server beside it: a photo question fails NotConfigured with no request, a spoken one is heard there and answered; scene mode is refused")
    func cannotSee() async throws {
        try await BLEWorld.with { ble in
            try await ble.withSession(monocle, config: try embeddedConfig(ble, speechServer: true)) { bus, vm in
                try await ble.pairReady(monocle, bus)
                try await vm.call("FeedAudio", [.string(try SpeechFixture.speech(in: ble.world.directory))])
                try await vm.call("FeedImage", [.string(Paths.fixtures + "/photo.jpg")])
                try await ble.world.setTranscript("what is in front of me")
                let before = try await ble.world.serverRequests().count
                let photo = try await nextQuestion(bus) { try await vm.call("Hold", [.double(1.5)]) }
                #expect(photo.last?.member == GlassdBus.Signal.queryFailed, "\(photo.map(\.arguments))")
                #expect(photo.last?.arguments.dropFirst().first == .string(GlassdErrorName.notConfigured))
                #expect(photo.last?.arguments.dropFirst(2).first?.string?.contains("vision_model") == true)
                try await vm.waitForDisplay(containing: "cannot see photos")
                #expect(try await ble.world.serverRequests().count == before)
                try await vm.waitForDisplay(containing: "Tap to speak")

                try await ble.world.setTranscript("and without a photo")
                let spoken = try await nextQuestion(bus) { try await vm.call("Tap") }
                #expect(spoken.last?.member == GlassdBus.Signal.answered, "\(spoken.map(\.arguments))")
                let paths = try await ble.world.serverRequests().dropFirst(before).compactMap { $0["path"] as? String }
                #expect(paths.contains { $0.hasSuffix("/audio/transcriptions") } && paths.contains { $0.hasSuffix("/chat/completions") }, "\(paths)")
                try await vm.waitForDisplay(containing: "echo: and without a photo")

                // Scene mode would send the model photos: refused, the mode kept.
                let scene = try await ble.world.glassctl(["mode", "scene"])
                #expect(!scene.ok && scene.stderr.contains(GlassdErrorName.notConfigured), "\(scene.stderr)")
                #expect(try await ble.world.glassctl(["mode"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "assistant")
            }
        }
    }
}
