// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import Foundation
import GlassdAPI
import Testing

/// What a local caller can push on (stalled exports, a shutdown mid-answer) and what glassd's
/// hardened system unit forbids (the host's audio), on a private session bus.
@Suite("Edges a local caller pushes on, and the host's audio out of reach", .timeLimit(.minutes(4)), .serialized)
struct LocalEdgeTests {
    /// About 400 KiB of history as JSON Lines: more than a pipe holds.
    private func bigHistory(in world: World) throws -> String {
        let text = String(repeating: "x", count: 300)
        let lines = (0..<1200).map { i in
            #"{"created_at":\#(i),"query_id":"q\#(i)","role":"user","text":"\#(text)","mode":"assistant","conversation":1}"#
        }
        let path = world.directory + "/big.jsonl"
        try Data(lines.joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test("six exports into pipes nobody reads: one waits, five are refused Busy at once, a question is still answered; the waiting one ends when its reader goes")
    func stalledExports() async throws {
        try await World.with { world in
            try await world.withGlassd { _ in
                let imported = try await world.glassctl(["history", "--import", try bigHistory(in: world)])
                #expect(imported.ok, "\(imported.stderr)")
                let bus = try await world.connect()
                var pipes: [[Int32]] = []
                for _ in 0..<6 {
                    var ends: [Int32] = [-1, -1]
                    try #require(pipe(&ends) == 0)
                    pipes.append(ends)
                }
                let readEnds = Flag()
                defer {
                    for ends in pipes { close(ends[1]) }
                    if !readEnds.isSet { for ends in pipes { close(ends[0]) } }
                }
                let (outcomes, report) = AsyncStream.makeStream(of: String.self)
                let calls = pipes.map { ends in
                    let writeEnd = ends[1]
                    return Task {
                        do {
                            _ = try await bus.call(
                                GlassdBus.name, path: GlassdBus.managerPath, interface: GlassdBus.managerInterface,
                                member: GlassdBus.Method.exportHistory, [.unixFD(writeEnd)], timeoutSeconds: 120)
                            report.yield("done")
                        } catch let error as BusError {
                            report.yield(error.name)
                        } catch {
                            report.yield("\(error)")
                        }
                    }
                }
                let refused = try await within(.seconds(60), failure: { "five exports were not refused: \(world.log())" }) {
                    var seen: [String] = []
                    for await outcome in outcomes {
                        seen.append(outcome)
                        if seen.count == 5 { return seen }
                    }
                    return seen
                }
                #expect(refused == Array(repeating: GlassdErrorName.busy, count: 5))
                // The database still has readers for a question.
                let asked = try await world.callManager("Query", "s", ["still answered"])
                #expect(asked.ok && busctlString(asked) == "echo: still answered", "\(asked.stderr)")
                // Its reader gone, the waiting export fails on the broken pipe.
                for ends in pipes { close(ends[0]) }
                readEnds.set()
                let last = try await within(.seconds(30), failure: { "the waiting export did not end" }) {
                    for await outcome in outcomes { return outcome }
                    return ""
                }
                #expect(last == GlassdErrorName.invalidArgs)
                for call in calls { await call.value }
                report.finish()
                await bus.close()
            }
        }
    }

    @Test("on shutdown glassd closes its connection without ReleaseName: its name and connection go at once, so no private signal of a running answer goes out unowned")
    func shutdownWithoutRelease() async throws {
        try await World.with { world in
            try await withBackground(
                "/usr/bin/dbus-monitor", ["--address", world.busAddress], log: world.directory + "/monitor.log", firstLine: true
            ) { monitor, _ in
                let reply = try await world.withGlassd { _ in
                    try await world.busctl([
                        "--json=short", "call", "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetNameOwner",
                        "s", GlassdBus.name,
                    ])
                }
                let owner = busctlString(reply) ?? "?"
                #expect(owner.hasPrefix(":"), "\(reply.stderr)")
                // glassd has exited: the monitor sees this call after all glassd sent.
                let marker = try await world.busctl(["call", "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetId"])
                #expect(marker.ok, "\(marker.stderr)")
                let lines = try await within(.seconds(30), failure: { "the monitor never saw the marker" }) {
                    var lines: [String] = []
                    while let line = try await monitor.nextLine() {
                        lines.append(line)
                        if line.contains("member=GetId") { return lines }
                    }
                    throw TestFailure("the monitor ended: \(lines)")
                }
                let fromGlassd = lines.filter { $0.contains("sender=\(owner) ") }
                #expect(fromGlassd.contains { $0.contains("member=RequestName") }, "the monitor saw glassd: \(fromGlassd)")
                #expect(!fromGlassd.contains { $0.contains("member=ReleaseName") }, "\(fromGlassd)")
            }
        }
    }

    /// The environment of a system service under glassd's unit: no runtime directory, no audio
    /// server, no sound devices (an empty stand-in for /dev); audio tools from `tools`.
    private func hardened(_ world: World, tools: String, devices: [String] = []) throws -> [String: String] {
        let dev = world.directory + "/dev"
        try FileManager.default.createDirectory(atPath: dev + "/snd", withIntermediateDirectories: true)
        for name in devices { _ = FileManager.default.createFile(atPath: dev + "/snd/" + name, contents: Data()) }
        let runtime = world.directory + "/runtime"
        try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true)
        return [
            "XDG_RUNTIME_DIR": runtime, "PULSE_SERVER": "", "PIPEWIRE_RUNTIME_DIR": "", "GLASSD_AUDIO_DEV_DIR": dev,
            "GLASSD_AUDIO_TOOLS_DIR": tools,
        ]
    }

    /// A stand-in recorder (and player) in `world`'s bin that leaves a mark when it runs.
    private func standIns(_ world: World) throws -> (bin: String, mark: String) {
        let bin = world.directory + "/bin"
        let mark = world.directory + "/recorder-ran"
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        for name in ["arecord", "aplay"] {
            try "#!/bin/sh\necho \"$0\" >> \"\(mark)\"\nexec sleep 600\n".write(toFile: bin + "/" + name, atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: bin + "/" + name)
        }
        return (bin, mark)
    }

    private func wakeConfig(_ world: World) throws -> String {
        let path = try world.writeConfig()
        try (try String(contentsOfFile: path, encoding: .utf8) + "[wake]\nphrase = \"Hey, glasses\"\nsource = \"host\"\n")
            .write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Manager1.Wake once `done` holds for it (on PropertiesChanged), bounded.
    private func wake(_ bus: BusConnection, until done: @escaping @Sendable ([String: DBusValue]) -> Bool) async throws
        -> [String: DBusValue]
    {
        let changes = try await bus.signals(
            SignalMatch(path: GlassdBus.managerPath, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"))
        let now =
            try await bus.call(
                GlassdBus.name, path: GlassdBus.managerPath, interface: "org.freedesktop.DBus.Properties", member: "Get",
                [.string(GlassdBus.managerInterface), .string(GlassdBus.Property.wake)]
            ).first?.unwrapped.stringKeyed ?? [:]
        if done(now) { return now }
        return try await within(.seconds(60), failure: { "Manager1.Wake never got there (it was \(now))" }) {
            for await signal in changes {
                guard let changed = signal.arguments.dropFirst().first?.stringKeyed,
                    let value = changed[GlassdBus.Property.wake]?.unwrapped.stringKeyed
                else { continue }
                if done(value) { return value }
            }
            throw TestFailure("signals ended")
        }
    }

    @Test("[wake] source = \"host\" where the host's audio cannot be reached: Manager1.Wake failed saying why, one warning, no recorder started")
    func microphoneOutOfReach() async throws {
        try await World.with { world in
            let (bin, mark) = try standIns(world)
            var environment = try hardened(world, tools: bin)
            // Found in PATH too, as before: no recorder may start either way.
            environment["PATH"] = bin + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
            try await world.withGlassd(config: try wakeConfig(world), environment: environment) { _ in
                let bus = try await world.connect()
                let status = try await wake(bus) { $0["state"]?.string != "waiting" }
                #expect(status["state"]?.string == "failed", "\(status)")
                let error = status["error"]?.string ?? ""
                #expect(error.contains("not reachable from glassd's system service") && error.contains("source = \"glasses\""), "\(error)")
                // Asked again later: the same; nothing retried meanwhile.
                let question = try await world.callManager("Query", "s", ["after the check"])
                #expect(question.ok, "\(question.stderr)")
                #expect((try await wake(bus) { _ in true })["state"]?.string == "failed")
                await bus.close()
            }
            #expect(!FileManager.default.fileExists(atPath: mark), "a recorder ran")
            let warnings = world.log().split(separator: "\n").filter { $0.contains("host's microphone is not reachable") }
            #expect(warnings.count == 1, "\(warnings)")
        }
    }

    @Test("[agent] speak where the host's audio cannot be reached: one warning at the start")
    func speakerOutOfReach() async throws {
        try await World.with { world in
            let (bin, _) = try standIns(world)
            let config = try world.writeConfig()
            try (try String(contentsOfFile: config, encoding: .utf8) + "[agent]\nbase_url = \"http://127.0.0.1:9\"\nspeak = true\n")
                .write(toFile: config, atomically: true, encoding: .utf8)
            try await world.withGlassd(config: config, environment: try hardened(world, tools: bin)) { _ in }
            let warnings = world.log().split(separator: "\n").filter { $0.contains("[agent] speak is on, but the host's audio is not reachable") }
            #expect(warnings.count == 1, "\(world.log())")
        }
    }

    @Test("the host's recorder is looked for in the system's directories, not in PATH")
    func recorderNotFromPath() async throws {
        try await World.with { world in
            let (bin, mark) = try standIns(world)
            // The audio reachable (a capture device), the stand-in first in PATH, no override.
            var environment = try hardened(world, tools: bin, devices: ["pcmC0D0c"])
            environment["GLASSD_AUDIO_TOOLS_DIR"] = nil
            environment["PATH"] = bin + ":.:" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
            try await world.withGlassd(config: try wakeConfig(world), environment: environment) { _ in
                let bus = try await world.connect()
                // Listening through a system recorder, or an error saying there is none or it ended.
                let status = try await wake(bus) { $0["state"]?.string == "listening" || $0["error"]?.string?.isEmpty == false }
                #expect(status["state"]?.string != "failed", "the audio is reachable: \(status)")
                await bus.close()
            }
            #expect(!FileManager.default.fileExists(atPath: mark), "the recorder in PATH ran")
            #expect(!world.log().contains("through \(bin)/"), "\(world.log())")
        }
    }
}
