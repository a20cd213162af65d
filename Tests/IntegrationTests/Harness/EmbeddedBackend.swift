// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation

/// The embedded default chat backend (Scripts/backend: a chat model on llama-cpp-python), set up by
/// Scripts/test (`Scripts/backend --setup-only`) in the venv it uses.
enum EmbeddedBackend {
    /// The chat model these tests ask: the small one. They test glassd's side (streaming, History,
    /// the servers' lifecycle), not what a model knows, and the default (Qwen2.5-Coder-1.5B)
    /// streams about 4 tokens a second on two busy cores to the small one's 30-40. Scripts/run's
    /// lifecycle test and Scripts/demo's test run the default.
    static let chatModel = "SmolLM2-135M-Instruct"

    /// The default chat model, as Scripts/backend serves it with no --chat-model.
    static let defaultChatModel = "Qwen2.5-Coder-1.5B-Instruct"

    static var venv: String {
        ProcessInfo.processInfo.environment["GLASSD_BACKEND_VENV"] ?? Paths.root + "/.glassd-run/backend"
    }

    static var script: String { Paths.root + "/Scripts/backend" }

    /// Whether the venv is set up (its stamp is there): then the server starts in seconds.
    static var available: Bool {
        FileManager.default.fileExists(atPath: venv + "/.glassd-backend-requirements.sha256")
    }

    /// Set by Scripts/test, which sets the backend up: the tests must not be skipped.
    static var ready: Bool { available || ProcessInfo.processInfo.environment["GLASSD_REQUIRE_BACKEND"] != nil }

    /// What Scripts/backend says it serves.
    struct Servers: Sendable {
        var url = ""
        var model = ""
        var speechURL = ""
        var speechModel = ""
        /// The model of its translations (Whisper base), when it has one.
        var translationModel = ""
        var speechOutURL = ""
        var speechOutModel = ""
    }

    /// Runs the servers (their logs in `directory`) until `body` ends; `body` gets the chat
    /// server's base URL and model. Stopped with SIGTERM afterwards, which the launcher passes on
    /// to the servers and waits for.
    static func with<R: Sendable>(
        in directory: String, _ body: (Background, _ url: String, _ model: String) async throws -> R
    ) async throws -> R {
        try await withServers(in: directory) { process, servers in try await body(process, servers.url, servers.model) }
    }

    /// The same, with the speech server's URL and model too.
    static func withServers<R: Sendable>(
        in directory: String, _ body: (Background, Servers) async throws -> R
    ) async throws -> R {
        try await withBackground(
            "/usr/bin/env", ["python3", script, "--log", directory + "/backend.log", "--chat-model", chatModel],
            environment: ["GLASSD_BACKEND_VENV": venv], log: directory + "/backend-launcher.log", firstLine: true
        ) { process, line in
            var servers = Servers()
            for word in line.split(separator: " ") {
                let pair = word.split(separator: "=", maxSplits: 1).map(String.init)
                guard pair.count == 2 else { continue }
                switch pair[0] {
                case "GLASSD_BASE_URL": servers.url = pair[1]
                case "GLASSD_MODEL": servers.model = pair[1]
                case "GLASSD_TRANSCRIPTION_URL": servers.speechURL = pair[1]
                case "GLASSD_TRANSCRIPTION_MODEL": servers.speechModel = pair[1]
                case "GLASSD_TRANSLATION_MODEL": servers.translationModel = pair[1]
                case "GLASSD_SPEECH_OUT_URL": servers.speechOutURL = pair[1]
                case "GLASSD_SPEECH_OUT_MODEL": servers.speechOutModel = pair[1]
                default: break
                }
            }
            guard !servers.url.isEmpty, !servers.speechURL.isEmpty else {
                let log = (try? String(contentsOfFile: directory + "/backend-launcher.log", encoding: .utf8)) ?? ""
                throw TestFailure("the embedded backend did not start (\(line)):\n" + log)
            }
            return try await body(process, servers)
        }
    }

    /// The embedded speech server (Scripts/speech_server.py in the same venv) until `body` ends;
    /// `body` gets its base URL and model name.
    static func withSpeech<R: Sendable>(
        in directory: String, _ body: (Background, _ url: String, _ model: String) async throws -> R
    ) async throws -> R {
        try await withBackground(
            venv + "/bin/python", [Paths.root + "/Scripts/speech_server.py"], log: directory + "/speech.log", firstLine: true
        ) { process, line in
            let words = line.split(separator: " ").map(String.init)
            // READY URL TRANSCRIPTION-MODEL SPEECH-MODEL
            guard words.count == 4, words[0] == "READY" else {
                let log = (try? String(contentsOfFile: directory + "/speech.log", encoding: .utf8)) ?? ""
                throw TestFailure("the speech server did not start (\(line)):\n" + log)
            }
            return try await body(process, words[1], words[2])
        }
    }

    /// True while something accepts connections on 127.0.0.1:`port`.
    static func listening(port: Int) async -> Bool {
        let result = try? await runCommand(
            "python3",
            ["-c", "import socket,sys; s=socket.socket(); s.settimeout(1); sys.exit(s.connect_ex(('127.0.0.1', int(sys.argv[1]))))", "\(port)"])
        return result?.ok == true
    }

    static func port(of url: String) -> Int? {
        URLComponents(string: url)?.port
    }
}
