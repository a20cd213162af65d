// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation
import Testing

private let ready =
    EmbeddedBackend.ready && (BLEWorld.available || ProcessInfo.processInfo.environment["GLASSD_REQUIRE_BLE"] != nil)

/// Scripts/demo as a new user runs it, with no server configured: its own bus, the fake BlueZ, a
/// virtual Monocle, the embedded default backend and glassd (the binaries under test), questions
/// typed on its standard input.
@Suite("Scripts/demo", .timeLimit(.minutes(5)), .enabled(if: ready, "the BLE world or the embedded backend is not set up"))
struct DemoTests {
    @Test("with no server configured the embedded backends hear and answer a spoken question and the screen says so; a photo question fails NotConfigured; :quit leaves nothing running")
    func embeddedDemo() async throws {
        let runDirectory = try Paths.temporaryDirectory()
        let input = "what is the capital of France\n:photo Tests/Fixtures/photo.jpg what is this\n:quit\n"
        let result = try await runCommand(
            "/bin/bash", ["-c", "cd \"$DEMO_ROOT\" && printf '%s' \"$DEMO_INPUT\" | Scripts/demo --no-build"],
            environment: [
                "DEMO_INPUT": input, "GLASSD_BASE_URL": "", "GLASSD_API_KEY": "",
                "GLASSD_BIN_DIR": Paths.bin, "GLASSD_RUN_DIR": runDirectory,
                "GLASSD_BACKEND_VENV": EmbeddedBackend.venv, "GLASSD_CHAT_MODEL": "", "DEMO_ROOT": Paths.root,
            ])
        let screen = result.stdout
        #expect(result.ok, "exit \(result.status)\n\(screen.suffix(3000))\n\(result.stderr.suffix(2000))")
        let model = EmbeddedBackend.defaultChatModel
        #expect(screen.contains("the EMBEDDED DEFAULT backend answers: \(model)"), "\(screen.prefix(3000))")
        #expect(screen.contains("answers from the embedded \(model)"))
        // Heard by Whisper tiny.en from espeak-ng's voice, not handed the typed text.
        let transcribed = screen.split(separator: "\n").first { $0.contains("Transcribed: ") }.map { $0.lowercased() } ?? ""
        #expect(transcribed.contains("capital") && transcribed.contains("france"), "\(transcribed)")
        #expect(screen.contains("whisper-tiny.en hears what espeak-ng says"))
        let answered = screen.split(separator: "\n").first { $0.contains("Answered: ") }
        #expect(answered.map { !$0.contains("echo:") } == true, "\(answered ?? "no Answered")")
        // The default model knows it (SmolLM2-135M, the default before, once answered "I'm sorry for
        // your loss"): Scripts/bench-chat-models had it right in every run.
        #expect(answered.map { $0.lowercased().contains("paris") } == true, "\(answered ?? "no Answered")")
        #expect(screen.contains("QueryFailed: org.glassd.Error.NotConfigured: The embedded default model cannot see photos"))
        #expect(screen.contains("cannot see photos"))
        // Everything it started has stopped: nothing runs from its directory.
        let left = try await runCommand("pgrep", ["-af", runDirectory + "/demo"])
        #expect(left.stdout.isEmpty, "\(left.stdout)")
    }

    @Test("--frame --fake: glassd bonds with a virtual Frame, uploads its Lua app, answers a spoken question and a double tap's photo question on its display")
    func frameDemo() async throws {
        let runDirectory = try Paths.temporaryDirectory()
        let input = "what is the tallest mountain\n:photo Tests/Fixtures/photo.jpg what is this\n:quit\n"
        let result = try await runCommand(
            "/bin/bash", ["-c", "cd \"$DEMO_ROOT\" && printf '%s' \"$DEMO_INPUT\" | Scripts/demo --no-build --fake --frame"],
            environment: [
                "DEMO_INPUT": input, "GLASSD_BASE_URL": "", "GLASSD_API_KEY": "", "GLASSD_BIN_DIR": Paths.bin,
                "GLASSD_RUN_DIR": runDirectory, "DEMO_ROOT": Paths.root,
            ])
        let screen = result.stdout
        #expect(result.ok, "exit \(result.status)\n\(screen.suffix(3000))\n\(result.stderr.suffix(2000))")
        #expect(screen.contains("starting the virtual Frame"))
        #expect(screen.contains("uploading"), "\(screen.prefix(3000))")
        #expect(screen.contains("Answered: \"echo: what is the tallest mountain"), "\(screen.suffix(3000))")
        #expect(screen.contains("double tap (photo, then the question)"))
        #expect(screen.contains("Answered: \"echo: what is this"), "\(screen.suffix(3000))")
        let left = try await runCommand("pgrep", ["-af", runDirectory + "/demo"])
        #expect(left.stdout.isEmpty, "\(left.stdout)")
    }
}
