// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import Foundation
import GlassdAPI
import Testing

@Suite("Typed errors", .timeLimit(.minutes(3)), .serialized)
struct ErrorTests {
    /// What glassctl reports for one question: its exit status and the error name it printed.
    private func failure(_ world: World, _ question: String) async throws -> (Int32, String) {
        let result = try await world.glassctl(["query", question])
        let name = result.stderr.split(separator: "(").last.map { String($0.dropLast(2)) } ?? ""
        return (result.status, name)
    }

    @Test("each upstream failure has its own error name, a one-line message and a QueryFailed signal")
    func upstreamErrors() async throws {
        try await World.with { world in
            try await world.withGlassd { _ in
                let bus = try await world.connect()
                let failures = try await bus.signals(SignalMatch(member: GlassdBus.Signal.queryFailed))
                let cases: [(String, String)] = [
                    ("[401] who", GlassdErrorName.unauthorized),
                    ("[403] who", GlassdErrorName.unauthorized),
                    ("[429] busy", GlassdErrorName.rateLimited),
                    ("[500] broken", GlassdErrorName.upstreamFailed),
                    ("[midstream] half", GlassdErrorName.upstreamFailed),
                    ("[malformed] junk", GlassdErrorName.upstreamFailed),
                ]
                for (question, expected) in cases {
                    let result = try await world.glassctl(["query", question])
                    #expect(result.status == 1, "\(question)")
                    #expect(result.stderr.hasSuffix("(\(expected))\n"), "\(question): \(result.stderr)")
                    #expect(result.stderr.split(separator: "\n").count == 1)
                }
                var names: [String] = []
                for await signal in failures {
                    names.append(signal.arguments[1].string ?? "")
                    if names.count == cases.count { break }
                }
                #expect(names == cases.map(\.1))
                await bus.close()
            }
        }
    }

    @Test("429 with Retry-After and a 500 are retried and then succeed")
    func retriesRecover() async throws {
        try await World.with { world in
            try await world.withGlassd { _ in
                // (How long the retry waits, Retry-After included, is checked in OpenAIChatClientTests
                // with an injected clock.)
                let limited = try await world.callManager("Query", "s", ["[429once] again"])
                #expect(busctlString(limited) == "echo: [429once] again")
                let failed = try await world.callManager("Query", "s", ["[500once] again"])
                #expect(busctlString(failed) == "echo: [500once] again")
                let requests = try await world.serverRequests()
                #expect(requests.count == 4)
            }
        }
    }

    @Test("429 and 500 for ever give up after a bounded number of attempts")
    func retriesAreBounded() async throws {
        try await World.with { world in
            try await world.withGlassd { _ in
                let (status, name) = try await failure(world, "[500] still")
                #expect(status == 1)
                #expect(name == GlassdErrorName.upstreamFailed)
                let requests = try await world.serverRequests()
                #expect(requests.count == 4)
            }
        }
    }

    @Test("a stalled stream ends in Timeout")
    func stallTimesOut() async throws {
        try await World.with { world in
            // The server holds [stall] for 120 s: only glassd's own 2 s limit can end it first,
            // and then with Timeout (the suite's time limit catches a hang).
            let config = try world.writeConfig(timeoutSeconds: 2)
            try await world.withGlassd(config: config) { _ in
                let (status, name) = try await failure(world, "[stall] hello")
                #expect(status == 1)
                #expect(name == GlassdErrorName.timeout)
            }
        }
    }

    @Test("no base_url gives NotConfigured; an unreachable server gives UpstreamFailed")
    func configurationErrors() async throws {
        try await World.with { world in
            let unconfigured = try world.writeConfig(baseURL: .some(nil))
            try await world.withGlassd(config: unconfigured) { _ in
                let (_, name) = try await failure(world, "anyone there")
                #expect(name == GlassdErrorName.notConfigured)
                let backend = try await world.busctl(["get-property", GlassdBus.name, GlassdBus.managerPath, GlassdBus.managerInterface, "Backend"])
                #expect(backend.stdout == "s \"\"\n")
            }
            let unreachable = try world.writeConfig(baseURL: "http://127.0.0.1:9/v1", timeoutSeconds: 5)
            try await world.withGlassd(config: unreachable) { _ in
                let (_, name) = try await failure(world, "anyone there")
                #expect(name == GlassdErrorName.upstreamFailed)
            }
        }
    }

    @Test("a server that does not answer in HTTP (a garbage status line) is UpstreamFailed with a hint, not a bad base URL")
    func notHTTP() async throws {
        // Reads a request, answers with a line that is no HTTP status, hangs up.
        let garbage = """
            import socket
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            s.listen(8)
            print(s.getsockname()[1], flush=True)
            while True:
                c, _ = s.accept()
                c.recv(65536)
                c.sendall(b"GARBAGE \\x00\\xff not a status line\\r\\n\\r\\n")
                c.close()
            """
        try await World.with { world in
            try await withBackground("/usr/bin/env", ["python3", "-c", garbage], log: world.directory + "/garbage.log", firstLine: true) {
                _, port in
                let config = try world.writeConfig(baseURL: "http://127.0.0.1:\(port)/v1", timeoutSeconds: 5)
                try await world.withGlassd(config: config) { _ in
                    let result = try await world.glassctl(["query", "anyone there"])
                    #expect(!result.ok && result.stderr.hasSuffix("(\(GlassdErrorName.upstreamFailed))\n"), "\(result.stderr)")
                    #expect(result.stderr.contains("did not answer in HTTP") && result.stderr.contains("base_url"), "\(result.stderr)")
                }
            }
        }
    }

    @Test("empty and oversized questions are InvalidArgs and reach no server")
    func invalidArguments() async throws {
        try await World.with { world in
            try await world.withGlassd { _ in
                let bus = try await world.connect()
                for text in ["", "   \n", String(repeating: "x", count: 16 * 1024 + 1)] {
                    do {
                        _ = try await bus.call(
                            GlassdBus.name, path: GlassdBus.managerPath, interface: GlassdBus.managerInterface,
                            member: "Query", [.string(text)])
                        Issue.record("Query(\(text.prefix(10))) should fail")
                    } catch let error as BusError {
                        #expect(error.name == "org.freedesktop.DBus.Error.InvalidArgs")
                    }
                }
                // Exactly 16 KiB is still accepted.
                let big = try await bus.call(
                    GlassdBus.name, path: GlassdBus.managerPath, interface: GlassdBus.managerInterface,
                    member: "Query", [.string(String(repeating: "y", count: 16 * 1024))])
                #expect(big == [.string("echo: " + String(repeating: "y", count: 16 * 1024))])
                #expect(try await world.serverRequests().count == 1)
                await bus.close()
            }
        }
    }

    @Test("the API key reaches the server but never the logs, D-Bus or error text")
    func secretStaysSecret() async throws {
        try await World.with { world in
            let secret = "sk-test-VERYSECRET-0123456789"
            try await world.withGlassd(environment: ["GLASSD_API_KEY": secret]) { glassd in
                let bus = try await world.connect()
                let failures = try await bus.signals(SignalMatch(member: GlassdBus.Signal.queryFailed))
                _ = try await world.callManager("Query", "s", ["hi"])
                let failed = try await world.glassctl(["query", "[401] hi"])
                // A server that echoes the Authorization header in its error message.
                let leaked = try await world.glassctl(["query", "[leakkey] hi"])
                #expect(leaked.stderr.contains("HTTP 400"), "\(leaked.stderr)")
                #expect(!leaked.stderr.contains("VERYSECRET"))
                var messages: [String] = []
                for await signal in failures {
                    messages.append(signal.arguments[2].string ?? "")
                    if messages.count == 2 { break }
                }
                #expect(messages.count == 2 && messages.allSatisfy { !$0.contains("VERYSECRET") })
                await bus.close()
                let status = try await world.glassctl(["status", "--json"])
                let requests = try await world.serverRequests()
                let headers = requests.first?["headers"] as? [String: String]
                #expect(headers?["authorization"] == "Bearer \(secret)")
                #expect(failed.stderr.hasSuffix("(\(GlassdErrorName.unauthorized))\n"), "\(failed.stderr)")
                #expect(!failed.stderr.contains("VERYSECRET"))
                #expect(status.ok && status.stdout.hasPrefix("{"), "\(status.stdout)")
                #expect(!status.stdout.contains("VERYSECRET"))
                let cmdline = try String(contentsOfFile: "/proc/\(glassd.pid)/cmdline", encoding: .utf8)
                #expect(cmdline.hasPrefix(Paths.glassd))
                #expect(!cmdline.contains("VERYSECRET"))
            }
            #expect(!world.log().contains("VERYSECRET"))
            #expect(world.log().contains("GLASSD_API_KEY"))  // the source is logged, not the key
        }
    }
}

@Suite("Local-only privacy at start-up", .timeLimit(.minutes(3)))
struct PrivacyStartTests {
    @Test("local_only with a remote URL: glassd does not start (exit 78) and names the URL and the setting; with a loopback one it serves, Privacy local-only")
    func refusesRemote() async throws {
        try await World.with { world in
            let config = world.directory + "/private.conf"
            try "[assistant]\nbase_url = \"https://chat.example.invalid/v1\"\n[privacy]\nlocal_only = true\n"
                .write(toFile: config, atomically: true, encoding: .utf8)
            let refused = try await runCommand(
                Paths.glassd, ["--bus", "session", "--config", config, "--state-dir", world.directory + "/state"],
                environment: ["DBUS_SESSION_BUS_ADDRESS": world.busAddress, "DBUS_SYSTEM_BUS_ADDRESS": world.busAddress])
            #expect(refused.status == 78)
            #expect(refused.stderr.contains("https://chat.example.invalid/v1"), "\(refused.stderr)")
            #expect(refused.stderr.contains("[assistant] base_url"), "\(refused.stderr)")
            #expect(refused.stderr.split(separator: "\n").count == 1, "one line: \(refused.stderr)")

            try "[assistant]\nbase_url = \"\(world.serverURL)\"\n[privacy]\nlocal_only = true\n"
                .write(toFile: config, atomically: true, encoding: .utf8)
            try await world.withGlassd(config: config) { _ in
                let status = try await world.glassctl(["status"])
                #expect(status.stdout.contains("privacy: local-only"), "\(status.stdout)")
                let answer = try await world.glassctl(["query", "hello"])
                #expect(answer.ok, "\(answer.stderr)")
            }
        }
    }
}
