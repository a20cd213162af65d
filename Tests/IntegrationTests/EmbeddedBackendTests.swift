// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import Foundation
import GlassdAPI
import Testing

/// glassd against the real embedded default backend (Scripts/backend), and Scripts/run's lifecycle
/// with it. Scripts/test sets the backend's venv up (GLASSD_REQUIRE_BACKEND): there they always run.
@Suite("The embedded default backend", .timeLimit(.minutes(5)), .serialized, .enabled(if: EmbeddedBackend.ready))
struct EmbeddedBackendTests {
    @Test("glassd answers from the real embedded server: streamed, kept in History, a follow-up sent with the earlier turns")
    func answersFromTheEmbeddedServer() async throws {
        try await World.with { world in
            try await EmbeddedBackend.with(in: world.directory) { _, url, model in
                #expect(model == EmbeddedBackend.chatModel)
                #expect(url.hasPrefix("http://127.0.0.1:"))
                // A recording proxy in front of it shows what glassd sent.
                try await withBackground(
                    "/usr/bin/env", ["python3", Paths.fixtures + "/recording_proxy.py", url],
                    log: world.directory + "/proxy.log", firstLine: true
                ) { _, portLine in
                    let port = portLine.split(separator: " ").last.map(String.init) ?? ""
                    let proxyURL = "http://127.0.0.1:\(port)/v1"
                    let config = world.directory + "/embedded.conf"
                    try """
                    [assistant]
                    base_url = "\(proxyURL)"
                    chat_model = "\(model)"
                    embedded = true
                    timeout_seconds = 60
                    history_budget = 8000

                    """.write(toFile: config, atomically: true, encoding: .utf8)
                    try await world.withGlassd(config: config) { _ in
                        #expect(world.log().contains("with the embedded default backend"))
                        let backend = try await world.busctl(
                            ["get-property", GlassdBus.name, GlassdBus.managerPath, GlassdBus.managerInterface, "Backend"])
                        #expect(backend.stdout.contains(model), "\(backend.stdout)")
                        #expect(backend.stdout.contains("127.0.0.1"), "\(backend.stdout)")

                        let bus = try await world.connect()
                        let signals = try await bus.signals(SignalMatch(interface: GlassdBus.managerInterface))
                        var events = signals.makeAsyncIterator()
                        let questions = [
                            "What is the capital of France? Answer in one sentence.",
                            "Name three colours.",
                            "Repeat my first question.",
                        ]
                        var answers: [String] = []
                        for question in questions {
                            // A CPU-bound model on a busy machine can take longer than busctl's 25 s (and a
                            // caller that gives up cancels its question).
                            let result = try await world.callManager("Query", "s", [question], timeout: 120)
                            try #require(result.ok, "\(result.stderr)\n\(world.log())")
                            let answer = try #require(busctlString(result))
                            #expect(!answer.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty)
                            answers.append(answer)
                            var pieces: [String] = []
                            while let signal = await events.next() {
                                if signal.member == GlassdBus.Signal.answerDelta {
                                    pieces.append(signal.arguments[1].string ?? "")
                                } else if signal.member == GlassdBus.Signal.answered {
                                    #expect(signal.arguments[1].string == question)
                                    break
                                }
                            }
                            #expect(pieces.count > 1, "streamed in more than one piece: \(pieces)")
                            #expect(pieces.joined() == answer)
                        }
                        await bus.close()

                        let history = try await world.glassctl(["history", "--json", "-n", "6"])
                        let rows = try JSONSerialization.jsonObject(with: Data(history.stdout.utf8)) as? [[String: Any]]
                        #expect(rows?.map { $0["role"] as? String } == ["user", "assistant", "user", "assistant", "user", "assistant"])
                        #expect(rows?.map { $0["text"] as? String } == [
                            questions[0], answers[0], questions[1], answers[1], questions[2], answers[2],
                        ])

                        // The follow-up went out with the earlier turns.
                        let result = try await runCommand(
                            "python3",
                            ["-c", "import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1]).read().decode())",
                             "http://127.0.0.1:\(port)/_requests"])
                        let requests = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]] ?? []
                        let chats = requests.filter { ($0["path"] as? String)?.hasSuffix("/chat/completions") == true }
                        #expect(chats.count == 3)
                        let last = try #require(chats.last?["body"] as? [String: Any])
                        let messages = try #require(last["messages"] as? [[String: Any]])
                        #expect(messages.map { $0["role"] as? String } == ["system", "user", "assistant", "user", "assistant", "user"])
                        #expect(messages.dropFirst().map { $0["content"] as? String } == [
                            questions[0], answers[0], questions[1], answers[1], questions[2],
                        ])
                        #expect(last["model"] as? String == model)
                        #expect(last["stream"] as? Bool == true)
                    }
                }
            }
        }
    }

    @Test("Scripts/run with no server configured answers through the embedded backend; after SIGINT nothing runs or listens")
    func runLifecycle() async throws {
        try await World.with { world in
            let runDirectory = world.directory + "/run"
            let environment = [
                "GLASSD_BASE_URL": "", "GLASSD_API_KEY": "", "GLASSD_MODEL": "",
                "GLASSD_BIN_DIR": Paths.bin, "GLASSD_RUN_DIR": runDirectory,
                "GLASSD_BACKEND_VENV": EmbeddedBackend.venv, "GLASSD_CHAT_MODEL": "",
                "GLASSD_TRANSCRIPTION_URL": world.serverURL,
                "DBUS_SESSION_BUS_ADDRESS": world.busAddress,
            ]
            // Subscribed before the start, so glassd taking its name cannot be missed.
            let bus = try await world.connect()
            let owners = try await bus.signals(
                SignalMatch(path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: "NameOwnerChanged"))
            do {
                try await withBackground(
                    Paths.root + "/Scripts/run", [], environment: environment, log: world.directory + "/run.log",
                    firstLine: false
                ) { run, _ in
                    let runLog: @Sendable () -> String = { (try? String(contentsOfFile: world.directory + "/run.log", encoding: .utf8)) ?? "" }
                    // glassd takes its name once it is ready (the backend is up before glassd starts).
                    try await within(.seconds(120), failure: { "Scripts/run never got ready:\n" + runLog() }) {
                        for await signal in owners where signal.arguments.first?.string == GlassdBus.name {
                            if signal.arguments.last?.string?.isEmpty == false { return }
                        }
                        throw TestFailure("the bus connection ended")
                    }
                    let backend = try await world.busctl(
                        ["get-property", GlassdBus.name, GlassdBus.managerPath, GlassdBus.managerInterface, "Backend"]
                    ).stdout
                    #expect(backend.contains(EmbeddedBackend.defaultChatModel), "\(backend)")
                    let port = try #require(
                        backend.split(separator: " ").compactMap { EmbeddedBackend.port(of: String($0).replacingOccurrences(of: "\"", with: "")) }.first,
                        "\(backend)")
                    #expect(runLog().contains("EMBEDDED DEFAULT"))
                    #expect(runLog().contains("it can be wrong"))
                    #expect(runLog().contains("ready on org.glassd with the embedded default backend"))
                    let config = (try? String(contentsOfFile: runDirectory + "/glassd.conf", encoding: .utf8)) ?? ""
                    #expect(config.contains("[transcription]\nbase_url = \"\(world.serverURL)\""), "\(config)")

                    let answer = try await world.glassctl(["query", "What is the tallest mountain?"])
                    #expect(answer.ok, "\(answer.stderr)\n\(runLog())")
                    #expect(!answer.stdout.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty)

                    let pidReply = try await world.busctl(
                        ["--json=short", "call", "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                         "GetConnectionUnixProcessID", "s", GlassdBus.name])
                    let glassdPid = try #require(
                        ((try? JSONSerialization.jsonObject(with: Data(pidReply.stdout.utf8))) as? [String: Any])
                            .flatMap { ($0["data"] as? [Any])?.first as? Int })
                    #expect(await EmbeddedBackend.listening(port: port))
                    #expect(processes(matching: "--port \(port)").count == 1, "the server runs")
                    // The speech server, started too (speech goes elsewhere here): its port from the launcher's line.
                    let speechLine = try #require(runLog().split(separator: "\n").first { $0.contains("whisper-tiny.en transcribes on ") })
                    let speechPort = try #require(
                        speechLine.split(separator: " ").compactMap { EmbeddedBackend.port(of: String($0)) }.first, "\(speechLine)")
                    #expect(await EmbeddedBackend.listening(port: speechPort))
                    // Spoken answers come from the same speech server's espeak-ng, and glassd took that config.
                    #expect(
                        config.contains(
                            "[speech_out]\nbase_url = \"http://127.0.0.1:\(speechPort)/v1\"\nmodel = \"espeak-ng\"\nembedded = true\n"),
                        "\(config)")

                    kill(run.pid, SIGINT)
                    // Its stdout ends as Scripts/run exits, which it does only after waiting for
                    // glassd and the backend (Scripts/run itself may still be in the middle of
                    // exiting then: the kernel closes its files before it becomes a zombie).
                    try await within(.seconds(30), failure: { "Scripts/run did not stop on SIGINT:\n" + runLog() }) {
                        try await run.untilStdoutEnds()
                    }
                    #expect(!isRunning(Int32(glassdPid)), "glassd stopped")
                    #expect(processes(matching: "--port \(port)").isEmpty, "the server stopped")
                    #expect(processes(matching: "--log \(runDirectory)/backend.log").isEmpty, "the launcher stopped")
                    #expect(await !EmbeddedBackend.listening(port: port))
                    #expect(await !EmbeddedBackend.listening(port: speechPort), "the speech server stopped")
                }
            } catch {
                await bus.close()
                throw error
            }
            await bus.close()
        }
    }
}

/// Whether `pid` is alive (an exited child not reaped yet does not count).
private func isRunning(_ pid: Int32) -> Bool {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return false }
    // "pid (comm) S ...": the state follows the last ')'.
    guard let close = stat.lastIndex(of: ")") else { return false }
    let state = stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).prefix(1)
    return state != "Z" && state != "X"
}

/// The pids of running processes whose command line contains `text`.
private func processes(matching text: String) -> [Int32] {
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    return entries.compactMap { Int32($0) }.filter { pid in
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline"), isRunning(pid) else { return false }
        let line = String(decoding: data.map { $0 == 0 ? UInt8(ascii: " ") : $0 }, as: UTF8.self)
        return line.contains(text)
    }
}
