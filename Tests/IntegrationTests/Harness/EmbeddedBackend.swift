// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation

/// The embedded default chat backend (Scripts/backend: SmolLM2-135M-Instruct on llama-cpp-python),
/// set up by Scripts/test (`Scripts/backend --setup-only`) in the venv it uses.
enum EmbeddedBackend {
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

    /// Runs the server (its log in `directory`) until `body` ends; `body` gets its base URL and model.
    /// Stopped with SIGTERM afterwards, which the launcher passes on to the server and waits for.
    static func with<R: Sendable>(
        in directory: String, _ body: (Background, _ url: String, _ model: String) async throws -> R
    ) async throws -> R {
        try await withBackground(
            "/usr/bin/env", ["python3", script, "--log", directory + "/backend.log"],
            environment: ["GLASSD_BACKEND_VENV": venv], log: directory + "/backend-launcher.log", firstLine: true
        ) { process, line in
            var url = ""
            var model = ""
            for word in line.split(separator: " ") {
                if word.hasPrefix("GLASSD_BASE_URL=") { url = String(word.dropFirst("GLASSD_BASE_URL=".count)) }
                if word.hasPrefix("GLASSD_MODEL=") { model = String(word.dropFirst("GLASSD_MODEL=".count)) }
            }
            guard !url.isEmpty else {
                let log = (try? String(contentsOfFile: directory + "/backend-launcher.log", encoding: .utf8)) ?? ""
                throw TestFailure("the embedded backend did not start:\n" + log)
            }
            return try await body(process, url, model)
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
            guard words.count == 3, words[0] == "READY" else {
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
