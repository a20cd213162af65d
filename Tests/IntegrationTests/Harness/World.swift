// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import Foundation
import GlassdAPI

/// A private dbus-daemon and a fake OpenAI-compatible server, in a scratch folder; glassd is
/// started against them as often as a test wants.
struct World: Sendable {
    let directory: String
    let busAddress: String
    let serverURL: String

    /// Sets the world up for the duration of `body`.
    static func with<R: Sendable>(_ body: (World) async throws -> R) async throws -> R {
        let directory = try Paths.temporaryDirectory()
        // Kept for a look after a failure only when asked.
        defer {
            if ProcessInfo.processInfo.environment["GLASSD_KEEP_TEST_DIRS"] == nil {
                try? FileManager.default.removeItem(atPath: directory)
            }
        }
        let busConfig = try writeBusConfig(in: directory, type: "session")
        return try await withBackground(
            "/usr/bin/dbus-daemon", ["--config-file=\(busConfig)", "--nofork", "--print-address=1"],
            log: directory + "/dbus.log", firstLine: true
        ) { _, address in
            try await withBackground(
                "/usr/bin/env", ["python3", Paths.fixtures + "/fake_openai.py"], log: directory + "/server.log",
                firstLine: true
            ) { _, portLine in
                let port = portLine.split(separator: " ").last.map(String.init) ?? ""
                let world = World(directory: directory, busAddress: address, serverURL: "http://127.0.0.1:\(port)/v1")
                return try await body(world)
            }
        }
    }

    /// A glassd.conf for this world; `baseURL: nil` leaves the server unconfigured.
    func writeConfig(baseURL: String?? = .none, timeoutSeconds: Int = 10, historyBudget: Int = 8000) throws -> String {
        let path = directory + "/glassd.conf"
        var text = "[assistant]\n"
        switch baseURL {
        case .none: text += "base_url = \"\(serverURL)\"\n"
        case .some(.some(let url)): text += "base_url = \"\(url)\"\n"
        case .some(.none): break
        }
        text += "chat_model = \"fake-model\"\ntimeout_seconds = \(timeoutSeconds)\nhistory_budget = \(historyBudget)\n"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Runs glassd on this world's bus until `body` ends; waits for READY=1 first. Its state is in
    /// `stateDirectory` under the world's folder.
    /// `systemBus`: glassd serves on that bus as on the system bus (where it asks polkit),
    /// not on this world's.
    /// `user`: glassd runs as that user (setpriv, as root), as the unit's `User=` runs it; its
    /// state folder is made its own and the notify socket writable to it. `executable`: another
    /// glassd binary (an installed one).
    func withGlassd<R: Sendable>(
        config: String? = nil, environment: [String: String] = [:], logLevel: String = "debug",
        stateDirectory: String = "state", systemBus: String? = nil, user: String? = nil, executable: String = Paths.glassd,
        _ body: (Glassd) async throws -> R
    ) async throws -> R {
        let configPath = try config ?? writeConfig()
        let notify = try NotifySocket(path: directory + "/notify-\(UUID().uuidString.prefix(6))")
        var env = environment
        env["DBUS_SESSION_BUS_ADDRESS"] = busAddress
        // BlueZ, real or fake, is looked for on this same private bus.
        env["DBUS_SYSTEM_BUS_ADDRESS"] = systemBus ?? busAddress
        env["NOTIFY_SOCKET"] = notify.path
        let state = directory + "/" + stateDirectory
        var command = [executable]
        if let user {
            try Self.makeOwned(state, by: user)
            _ = chmod(notify.path, 0o666)
            command = ["/usr/bin/setpriv", "--reuid=\(user)", "--regid=\(user)", "--init-groups", "--"] + command
        }
        return try await withBackground(
            command[0],
            Array(command.dropFirst()) + [
                "--bus", systemBus == nil ? "session" : "system", "--config", configPath, "--state-dir", state, "--log-level", logLevel,
            ],
            environment: env, log: directory + "/glassd.log", firstLine: false
        ) { process, _ in
            guard await notify.wait(for: "READY=1") else {
                throw TestFailure("glassd never became ready; log:\n" + log())
            }
            return try await body(Glassd(process: process, notify: notify))
        }
    }

    /// A folder `user` owns alone (mode 0700), as systemd makes a unit's StateDirectory=.
    static func makeOwned(_ path: String, by user: String) throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        guard let account = getpwnam(user) else { throw TestFailure("no user \(user)") }
        guard chown(path, account.pointee.pw_uid, account.pointee.pw_gid) == 0, chmod(path, 0o700) == 0 else {
            throw TestFailure("cannot give \(path) to \(user)")
        }
    }

    func log() -> String { read("glassd.log") }

    /// A file of this world's folder, or "" when there is none.
    func read(_ name: String) -> String {
        (try? String(contentsOfFile: directory + "/" + name, encoding: .utf8)) ?? ""
    }

    /// busctl on this world's bus.
    func busctl(_ arguments: [String]) async throws -> CommandResult {
        try await runCommand("busctl", ["--address=\(busAddress)"] + arguments)
    }

    /// `busctl call` on glassd's manager object; `timeout` (seconds) replaces busctl's 25 s for
    /// calls as slow as the model behind them.
    func callManager(_ member: String, _ signature: String = "", _ arguments: [String] = [], timeout: Int? = nil)
        async throws -> CommandResult
    {
        let typed = signature.isEmpty ? [] : [signature] + arguments
        return try await busctl(
            (timeout.map { ["--timeout=\($0)"] } ?? []) + ["--json=short", "call", GlassdBus.name, GlassdBus.managerPath, GlassdBus.managerInterface, member] + typed)
    }

    /// glassctl on this world's bus.
    func glassctl(_ arguments: [String]) async throws -> CommandResult {
        try await runCommand(
            Paths.glassctl,
            arguments.prefix(glassctlCommandLength(arguments)) + ["--bus", "session"]
                + arguments.dropFirst(glassctlCommandLength(arguments)),
            environment: ["DBUS_SESSION_BUS_ADDRESS": busAddress])
    }

    /// A D-Bus connection of the test's own, for signals and precise timing.
    func connect() async throws -> BusConnection {
        try await BusConnection.open(.address(busAddress))
    }

    /// The chat requests the fake server received, in order.
    func serverRequests() async throws -> [[String: Any]] {
        let url = serverURL.replacingOccurrences(of: "/v1", with: "") + "/_requests"
        let result = try await runCommand(
            "python3", ["-c", "import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1]).read().decode())", url])
        let data = Data(result.stdout.utf8)
        return (try JSONSerialization.jsonObject(with: data) as? [[String: Any]]) ?? []
    }
}

/// A running glassd and the notify socket it reports to.
struct Glassd {
    let process: Background
    let notify: NotifySocket
    var pid: Int32 { process.pid }
    func kill9() { process.kill9() }
}

/// A dbus-daemon configuration of the given type listening in `directory`; anything goes
/// unless `include` adds policy files. Returns its path.
func writeBusConfig(in directory: String, type: String, include: [String] = []) throws -> String {
    let path = directory + "/\(type).conf"
    try """
    <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
     "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
    <busconfig>
      <type>\(type)</type>
      <listen>unix:path=\(directory)/\(type).socket</listen>
      <auth>EXTERNAL</auth>
      <policy context="default">
        <allow user="*"/>
        <allow send_destination="*" eavesdrop="true"/>
        <allow eavesdrop="true"/>
        <allow own="*"/>
      </policy>
      \(include.map { "<include>\($0)</include>" }.joined(separator: "\n  "))
    </busconfig>
    """.write(toFile: path, atomically: true, encoding: .utf8)
    return path
}

struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// The string a `busctl --json=short call` replied with.
func busctlString(_ result: CommandResult) -> String? {
    guard let object = try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any],
        let data = object["data"] as? [Any]
    else { return nil }
    return data.first as? String
}

/// How many of glassctl's arguments name its (sub)command, before which no option may come.
func glassctlCommandLength(_ arguments: [String]) -> Int {
    arguments.first == "agent" && arguments.count > 1 ? 2 : 1
}

/// Each line of `text` that is a JSON object (glassctl --json output), in order.
func jsonObjects(_ text: String) -> [[String: Any]] {
    text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
}
