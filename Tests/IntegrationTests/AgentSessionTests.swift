// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import Foundation
import GlassdAPI
import Glibc
import Testing

private let worldReady = BLEWorld.available || ProcessInfo.processInfo.environment["GLASSD_REQUIRE_BLE"] != nil
private let monocle = 3

/// Agent sessions end to end: glassd, the fake TEN server (its HTTP API and the graph's websocket,
/// Tests/Fixtures/fake_ten.py), and, for the wearer's voice, the virtual Monocle.
@Suite("Agent sessions with a TEN server", .timeLimit(.minutes(10)), .serialized, .enabled(if: worldReady, "the Python test world is not set up"))
struct AgentSessionTests {
    /// glassd with `[agent]` pointing at a fake TEN server, on a world with no glasses.
    private func withAgent(
        pingSeconds: Int = 1, _ body: (World, FakeTEN, BusConnection) async throws -> Void
    ) async throws {
        try await World.with { world in
            try await FakeTEN.with(in: world.directory) { ten in
                let config = try world.writeConfig()
                try ten.appendConfig(to: config, pingSeconds: pingSeconds)
                try await world.withGlassd(config: config) { _ in
                    let bus = try await world.connect()
                    do {
                        try await body(world, ten, bus)
                    } catch {
                        await bus.close()
                        let server = (try? String(contentsOfFile: world.directory + "/fake_ten.log", encoding: .utf8)) ?? ""
                        throw TestFailure("\(error)\n--- glassd:\n\(world.log().suffix(5000))\n--- fake TEN:\n\(server.suffix(2000))")
                    }
                    await bus.close()
                }
            }
        }
    }

    /// glassd with `[agent]`, the fake TEN server and a paired, ready virtual Monocle.
    private func withAgentGlasses(
        timeoutSeconds: Int = 60, _ body: (BLEWorld, FakeTEN, BusConnection, VirtualMonocle) async throws -> Void
    ) async throws {
        try await BLEWorld.with { ble in
            try await FakeTEN.with(in: ble.world.directory) { ten in
                let config = try ble.writeConfig()
                try ten.appendConfig(to: config, timeoutSeconds: timeoutSeconds)
                try await ble.withSession(monocle, config: config) { bus, vm in
                    try await ble.pairReady(monocle, bus)
                    try await body(ble, ten, bus, vm)
                }
            }
        }
    }

    private func start(_ world: World, graph: String? = nil) async throws -> CommandResult {
        let options = graph.map { ["a{sv}", "1", "graph", "s", $0] } ?? ["a{sv}", "0"]
        return try await world.busctl(
            ["--json=short", "call", GlassdBus.name, GlassdBus.managerPath, GlassdBus.managerInterface, GlassdBus.Method.startAgent]
                + options)
    }

    private func agentProperty(_ world: World, _ path: String, _ name: String) async throws -> String {
        let result = try await world.busctl(["get-property", GlassdBus.name, path, GlassdBus.agentInterface, name])
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private func waitForState(_ bus: BusConnection, _ path: String, _ state: String, timeout: Duration = .seconds(30)) async throws {
        try await waitForProperty(
            bus, destination: GlassdBus.name, path: path, interface: GlassdBus.agentInterface, GlassdBus.Agent.state,
            equals: .string(state), timeout: timeout)
    }

    @Test("start, pings, transcripts (partial, final, chunked and shuffled) as signals and History, Mode agent; Stop tells the server")
    func lifecycle() async throws {
        try await withAgent { world, ten, bus in
            let transcripts = try await bus.signals(
                SignalMatch(interface: GlassdBus.agentInterface, member: GlassdBus.Agent.transcript))
            let started = try await start(world)
            try #require(started.ok, "\(started.stderr)")
            let path = try #require(busctlString(started))
            #expect(path == GlassdBus.agentsPath + "/1")
            try await waitForState(bus, path, "running")
            // The start request, as the server checks it.
            let requests = try await ten.requests()
            let startRequest = try #require(requests.first { $0["path"] as? String == "/start" })
            #expect((startRequest["violations"] as? [String])?.isEmpty == true, "\(startRequest)")
            let body = try #require(startRequest["body"] as? [String: Any])
            #expect(body["graph_name"] as? String == "voice_assistant")
            #expect(body["timeout"] as? Int == 60)
            #expect(((body["properties"] as? [String: Any])?["llm"] as? [String: Any])?["model"] as? String == "test-model")
            let channel = try #require(body["channel_name"] as? String)
            #expect(try await agentProperty(world, path, GlassdBus.Agent.channel) == "s \"\(channel)\"")
            #expect(try await world.busctl(["get-property", GlassdBus.name, GlassdBus.managerPath, GlassdBus.managerInterface, "Mode"]).stdout
                == "s \"agent\"\n")
            let refused = try await world.busctl(["set-property", GlassdBus.name, GlassdBus.managerPath, GlassdBus.managerInterface, "Mode", "s", "translator"])
            #expect(refused.stderr.contains("agent session runs"), "\(refused.stderr)")
            let second = try await start(world)
            #expect(!second.ok && second.stderr.contains("runs already"), "\(second.stderr)")
            // Kept alive: pinged every second.
            try await ten.wait(for: "pings", atLeast: 2)
            // The server has taken the websocket (its handler runs after glassd's handshake ends).
            try await ten.wait(for: "client")

            try await ten.sendTranscript(role: "user", text: "what is", final: false, ts: 100)
            try await ten.sendTranscript(role: "user", text: "what is the weather", final: true, ts: 200)
            try await ten.sendTranscript(role: "assistant", text: "It is", final: false, ts: 300, chunked: true)
            try await ten.sendTranscript(
                role: "assistant", text: String(repeating: "Sunny and warm all day. ", count: 60), final: true, ts: 400,
                chunked: true, options: ["chunk_bytes": 200, "shuffle": true, "duplicate": true])
            var seen: [(String, String, Bool)] = []
            for await signal in transcripts {
                let a = signal.arguments
                guard case .bool(let final) = a[2] else { continue }
                seen.append((a[0].string ?? "", a[1].string ?? "", final))
                if seen.count == 4 { break }
            }
            #expect(seen.map(\.0) == ["user", "user", "assistant", "assistant"])
            #expect(seen.map(\.2) == [false, true, false, true])
            #expect(seen[1].1 == "what is the weather")
            #expect(seen[3].1.count == 24 * 60)

            let history = try await world.glassctl(["history", "--json", "-n", "2"])
            let rows = (try? JSONSerialization.jsonObject(with: Data(history.stdout.utf8))) as? [[String: Any]] ?? []
            #expect(rows.map { $0["query_id"] as? String } == ["agent/1/1", "agent/1/1"], "\(history.stdout)")
            #expect(rows.first?["text"] as? String == "what is the weather")

            let stop = try await world.busctl(["call", GlassdBus.name, path, GlassdBus.agentInterface, GlassdBus.Agent.stop])
            #expect(stop.ok, "\(stop.stderr)")
            #expect(try await agentProperty(world, path, GlassdBus.Agent.state) == "s \"stopped\"")
            let stopRequest = try #require(try await ten.requests().last { $0["path"] as? String == "/stop" })
            #expect((stopRequest["body"] as? [String: Any])?["channel_name"] as? String == channel)
            #expect(try await world.busctl(["get-property", GlassdBus.name, GlassdBus.managerPath, GlassdBus.managerInterface, "Mode"]).stdout
                == "s \"assistant\"\n")
            let status = try await world.glassctl(["agent", "status"])
            #expect(status.stdout.contains("\(path) stopped graph=voice_assistant channel=\(channel)"), "\(status.stdout)")
        }
    }

    @Test("three failed pings end the session visibly: failed, with the reason")
    func pingFailures() async throws {
        try await withAgent { world, ten, bus in
            let started = try await start(world)
            let path = try #require(busctlString(started), "\(started.stderr)")
            try await waitForState(bus, path, "running")
            try await ten.request("/_control", ["fail_pings": 3])
            try await waitForState(bus, path, "failed")
            let error = try await agentProperty(world, path, GlassdBus.Agent.error)
            #expect(error.contains("did not answer 3 pings in a row"), "\(error)")
            // The next session may start.
            let again = try await start(world)
            #expect(again.ok, "\(again.stderr)")
        }
    }

    @Test("refusals are typed: the workers limit is Busy, another code AgentFailed with the server's code; no [agent] is NotConfigured")
    func refusals() async throws {
        try await withAgent { world, ten, _ in
            try await ten.request("/_control", ["refuse_start": "10001"])
            let busy = try await start(world)
            #expect(!busy.ok && busy.stderr.contains("no free worker (code 10001)"), "\(busy.stderr)")
            try await ten.request("/_control", ["refuse_start": "10100"])
            let failed = try await world.glassctl(["agent", "start"])
            #expect(!failed.ok)
            #expect(failed.stderr.contains("10100"), "\(failed.stderr)")
            let status = try await world.glassctl(["agent", "status", "--json"])
            #expect(status.stdout.contains("\"failed\""), "\(status.stdout)")
        }
        try await World.with { world in
            try await world.withGlassd { _ in
                let result = try await start(world)
                #expect(result.stderr.contains("[agent]"), "\(result.stderr)")
            }
        }
    }

    @Test("glassd killed with a session running: the next glassd finds it on the server and stops it")
    func crashRecovery() async throws {
        try await World.with { world in
            try await FakeTEN.with(in: world.directory) { ten in
                let config = try world.writeConfig()
                try ten.appendConfig(to: config, pingSeconds: 1)
                try await world.withGlassd(config: config) { glassd in
                    let started = try await start(world)
                    #expect(started.ok, "\(started.stderr)")
                    try await ten.wait(for: "pings", atLeast: 1)
                    glassd.kill9()
                }
                try await world.withGlassd(config: config) { _ in
                    try await ten.wait(for: "stop", atLeast: 1)
                    let workers = try await ten.request("/_workers") as? [[String: Any]] ?? []
                    #expect(workers.first?["stopped_by"] as? String == "stop", "\(workers)")
                }
            }
        }
    }

    @Test("on the glasses: a tap streams the wearer's voice as 16 kHz s16 pieces; the agent's words appear on the display")
    func glassesVoice() async throws {
        try await withAgentGlasses { ble, ten, bus, vm in
            let started = try await start(ble.world)
            let path = try #require(busctlString(started), "\(started.stderr)")
            try await waitForState(bus, path, "running")
            let levels = try await bus.signals(SignalMatch(interface: GlassdBus.agentInterface, member: GlassdBus.Agent.level))
            try await vm.call("FeedAudio", [.string(try SpeechFixture.speech(in: ble.world.directory))])
            try await vm.call("Tap")
            try await ten.wait(for: "audio_bytes", atLeast: 32_000)
            let audio = try #require(try await ten.request("/_audio") as? [String: Any])
            #expect((audio["invalid"] as? [Any])?.isEmpty == true, "\(audio)")
            let durations = audio["durations_ms"] as? [Double] ?? []
            #expect(durations.dropLast().allSatisfy { (20...100).contains($0) }, "\(durations)")
            #expect((audio["rms_dbfs"] as? Double ?? -100) > -60, "speech, not silence: \(audio)")
            var levelIterator = levels.makeAsyncIterator()
            let level = await levelIterator.next()
            #expect(level?.arguments.first.map { if case .double(let d) = $0 { d <= 0 } else { false } } == true)

            try await ten.sendTranscript(role: "user", text: "tell me a joke", final: true, ts: 10)
            try await vm.waitForDisplay(containing: "tell me a joke")
            try await ten.sendTranscript(role: "assistant", text: "Why did the glasses blush", final: true, ts: 20)
            try await vm.waitForDisplay(containing: "glasses blush")
            let stop = try await ble.world.glassctl(["agent", "stop"])
            #expect(stop.ok, "\(stop.stderr)")
        }
    }

    @Test("the server dies: the session fails visibly, with the reason, and the next one may start once it is back")
    func serverDies() async throws {
        try await withAgent { world, ten, bus in
            let started = try await start(world)
            let path = try #require(busctlString(started), "\(started.stderr)")
            try await waitForState(bus, path, "running")
            try await ten.request("/_control", ["die": true])
            try await waitForState(bus, path, "failed")
            let error = try await agentProperty(world, path, GlassdBus.Agent.error)
            #expect(error.contains("websocket") || error.contains("pings"), "\(error)")
            let refused = try await start(world)
            #expect(!refused.ok && refused.stderr.contains("Could not reach the agent server"), "\(refused.stderr)")
        }
    }

    @Test("glassctl agent watch prints the transcripts and state changes as they come")
    func watch() async throws {
        try await withAgent { world, ten, bus in
            let started = try await start(world)
            let path = try #require(busctlString(started), "\(started.stderr)")
            try await waitForState(bus, path, "running")
            let lines = try await withBackground(
                Paths.glassctl, ["agent", "watch", "--bus", "session", "--json"],
                environment: ["DBUS_SESSION_BUS_ADDRESS": world.busAddress], log: world.directory + "/watch.log", firstLine: true
            ) { watcher, first in
                // Its first line, the running session, comes once it is subscribed.
                var lines = [first]
                try await ten.sendTranscript(role: "user", text: "hello there", final: true, ts: 5)
                let stop = try await world.busctl(["call", GlassdBus.name, path, GlassdBus.agentInterface, GlassdBus.Agent.stop])
                #expect(stop.ok, "\(stop.stderr)")
                while let line = try await watcher.nextLine() {
                    lines.append(line)
                    if line.contains("\"stopped\"") { break }
                }
                return lines
            }
            let objects = jsonObjects(lines.joined(separator: "\n"))
            #expect(objects.first?["state"] as? String == "running", "\(lines)")
            #expect(objects.contains { $0["text"] as? String == "hello there" && $0["role"] as? String == "user" }, "\(lines)")
            #expect(objects.last?["state"] as? String == "stopped", "\(lines)")
        }
    }

    @Test("Unpair stops the session on the glasses; glasses away longer than timeout_seconds stop it too")
    func unpairAndAway() async throws {
        try await BLEWorld.with { ble in
            try await FakeTEN.with(in: ble.world.directory) { ten in
                let config = try ble.writeConfig()
                try ten.appendConfig(to: config, pingSeconds: 1, timeoutSeconds: 5)
                try await ble.world.withGlassd(config: config) { _ in
                    let bus = try await ble.world.connect()
                    let first = try await ble.withMonocle(monocle, txPower: -45) { _ in
                        try await ble.pairReady(monocle, bus)
                        let first = try #require(busctlString(try await start(ble.world)))
                        try await waitForState(bus, first, "running")
                        return first
                    }
                    // Switched off: after timeout_seconds away the session stops.
                    try await waitForState(bus, first, "stopped", timeout: .seconds(40))
                    try await ble.withMonocle(monocle, txPower: -45) { _ in
                        try await waitForProperty(
                            bus, destination: GlassdBus.name, path: GlassdBus.devicePath(address: BLEWorld.adapterAddress(monocle)),
                            interface: GlassdBus.deviceInterface, GlassdBus.DeviceProperty.state, equals: .string("ready"),
                            timeout: .seconds(60))
                        let second = try #require(busctlString(try await start(ble.world)))
                        try await waitForState(bus, second, "running")
                        let unpair = try await ble.world.glassctl(["unpair"])
                        #expect(unpair.ok, "\(unpair.stderr)")
                        #expect(try await agentProperty(ble.world, second, GlassdBus.Agent.state) == "s \"stopped\"")
                    }
                    let stops = try await ten.requests().filter { $0["path"] as? String == "/stop" }
                    #expect(stops.count == 2)
                    await bus.close()
                }
            }
        }
    }

    @Test("glassd's shutdown stops the running session on the server; with speak on, the agent's speech goes to the audio player")
    func shutdownAndSpeech() async throws {
        try await World.with { world in
            try await FakeTEN.with(in: world.directory) { ten in
                // A stand-in for PipeWire's player where glassd looks for its player: what it plays goes to a FIFO the test reads.
                let bin = world.directory + "/bin"
                try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
                let played = world.directory + "/played.pcm"
                #expect(mkfifo(played, 0o600) == 0)
                try "#!/bin/sh\nexec cat > \"\(played)\"\n".write(toFile: bin + "/pw-cat", atomically: true, encoding: .utf8)
                try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: bin + "/pw-cat")
                let config = try world.writeConfig()
                try ten.appendConfig(to: config, extra: "speak = true")
                // A playback device in a stand-in for /dev: the host's audio is reachable.
                try FileManager.default.createDirectory(atPath: world.directory + "/dev/snd", withIntermediateDirectories: true)
                FileManager.default.createFile(atPath: world.directory + "/dev/snd/pcmC0D0p", contents: Data())
                // Read on a thread of its own: opening and reading a FIFO block.
                let (speech, heard) = AsyncStream.makeStream(of: Data.self)
                Thread.detachNewThread {
                    heard.yield(FileHandle(forReadingAtPath: played).flatMap { try? $0.readToEnd() } ?? Data())
                    heard.finish()
                }
                try await world.withGlassd(
                    config: config, environment: ["GLASSD_AUDIO_TOOLS_DIR": bin, "GLASSD_AUDIO_DEV_DIR": world.directory + "/dev"]
                ) { _ in
                    let bus = try await world.connect()
                    let started = try await start(world)
                    let session = try #require(busctlString(started), "\(started.stderr)")
                    try await waitForState(bus, session, "running")
                    let reply = try await ten.request("/_send", ["audio_reply": ["samples": 1600, "sample_rate": 16000]]) as? [String: Any]
                    #expect(reply?["code"] as? String == "0", "\(reply ?? [:])")
                    await bus.close()
                }
                // glassd is gone (SIGTERM): it told the server to stop on its way out, and the player got the speech.
                let stops = try await ten.requests().filter { $0["path"] as? String == "/stop" }
                #expect(stops.count == 1)
                let workers = try await ten.request("/_workers") as? [[String: Any]] ?? []
                #expect(workers.first?["stopped_by"] as? String == "stop", "\(workers)")
                var received = speech.makeAsyncIterator()
                #expect(await received.next()?.count == 3200, "100 ms of 16 kHz s16")
            }
        }
    }

    @Test("a session stopped while the wearer speaks to it gives the glasses back: the next tap is glassd's own question, answered")
    func stoppedWhileSpeaking() async throws {
        try await withAgentGlasses { ble, ten, bus, vm in
            let session = try #require(busctlString(try await start(ble.world)))
            try await waitForState(bus, session, "running")
            try await vm.call("FeedAudio", [.string(try SpeechFixture.speech(in: ble.world.directory))])
            try await vm.call("Tap")
            try await ten.wait(for: "audio_bytes", atLeast: 3200)
            let stop = try await ble.world.busctl(["call", GlassdBus.name, session, GlassdBus.agentInterface, GlassdBus.Agent.stop])
            #expect(stop.ok, "\(stop.stderr)")

            try await ble.world.setTranscript("what is the tallest mountain")
            let signals = try await bus.signals(SignalMatch(path: GlassdBus.managerPath, interface: GlassdBus.managerInterface))
            try await waitForProperty(
                bus, destination: GlassdBus.name, path: GlassdBus.devicePath(address: BLEWorld.adapterAddress(monocle)),
                interface: GlassdBus.deviceInterface, GlassdBus.DeviceProperty.state, equals: .string("ready"), timeout: .seconds(60))
            try await vm.call("FeedAudio", [.string(try SpeechFixture.speech(in: ble.world.directory))])
            try await vm.call("Tap")
            let answered = try await within(.seconds(60), failure: { "no answer to the next tap" }) {
                for await signal in signals where signal.member == GlassdBus.Signal.answered || signal.member == GlassdBus.Signal.queryFailed {
                    return signal
                }
                throw TestFailure("signals ended")
            }
            #expect(answered.member == GlassdBus.Signal.answered, "\(answered.arguments)")
        }
    }
}
