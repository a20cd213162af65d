// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import Foundation
import GlassdAPI

/// A private bus of the system type that loads the project's own dbus/org.glassd.conf (and
/// Debian's bus policy for polkitd), with polkit (python-dbusmock's polkitd template, or the real
/// polkitd: RealPolkit) and callers run as other users (setpriv): root, a member of group glassd,
/// the two test accounts in that group (ally, whom the real polkit's test rule allows, and
/// other), and a stranger (nobody, in no group).
struct SystemBus: Sendable {
    let world: World
    let address: String

    enum Caller: String, Sendable, CaseIterable {
        case root, member, ally, other, stranger
    }

    /// The accounts Scripts/test creates, in group glassd: what polkit sees is their own.
    static let allyUser = "glassd-test-ally"
    static let otherUser = "glassd-test-other"
    /// The unit's User=, which Scripts/install (and Scripts/test) creates.
    static let daemonUser = "glassd"
    static let polkitBusPolicy = "/usr/share/dbus-1/system.d/org.freedesktop.PolicyKit1.conf"

    static let nobody = "65534"
    static var glassdGroup: gid_t? { getgrnam("glassd")?.pointee.gr_gid }
    static let polkitName = "org.freedesktop.PolicyKit1"
    static let polkitPath = "/org/freedesktop/PolicyKit1/Authority"

    /// Whether this machine can run it: root (to act as others), setpriv, user and group glassd, dbusmock.
    static var available: Bool {
        getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") && glassdGroup != nil
            && getpwnam(daemonUser) != nil
            && FileManager.default.fileExists(atPath: "/usr/lib/python3/dist-packages/dbusmock/templates/polkitd.py")
    }

    /// The bus inside a World (for its chat server), until `body` ends. `policy`: glassd's bus
    /// policy file (an installed one); polkitd's own is loaded beside it when Debian has it.
    static func with<R: Sendable>(policy: String = Paths.root + "/dbus/org.glassd.conf", _ body: (SystemBus) async throws -> R)
        async throws -> R
    {
        try await World.with { world in
            // Other users must reach the socket and read what the tests hand them.
            _ = chmod(world.directory, 0o755)
            let policies = [policy] + (FileManager.default.fileExists(atPath: polkitBusPolicy) ? [polkitBusPolicy] : [])
            let config = try writeBusConfig(in: world.directory, type: "system", include: policies)
            return try await withBackground(
                "/usr/bin/dbus-daemon", ["--config-file=\(config)", "--nofork", "--print-address=1"],
                log: world.directory + "/system-bus.log", firstLine: true
            ) { _, address in
                try await body(SystemBus(world: world, address: address))
            }
        }
    }

    /// polkit (dbusmock's polkitd template: every action refused until SetAllowed) until `body` ends.
    func withPolkit<R: Sendable>(_ body: () async throws -> R) async throws -> R {
        try await withPolkitDaemon(
            "/usr/bin/python3", ["-m", "dbusmock", "--system", "--template", "polkitd", "--logfile", world.directory + "/polkit.calls"],
            body)
    }

    /// `executable` (a polkit) runs with this bus as the system bus until `body` ends; `body`
    /// starts once polkit's name is owned.
    func withPolkitDaemon<R: Sendable>(_ executable: String, _ arguments: [String], _ body: () async throws -> R) async throws -> R {
        let bus = try await BusConnection.open(.address(address))
        defer { Task { await bus.close() } }
        let owners = try await bus.signals(
            SignalMatch(sender: "org.freedesktop.DBus", interface: "org.freedesktop.DBus", member: "NameOwnerChanged"))
        return try await withBackground(
            executable, arguments, environment: ["DBUS_SYSTEM_BUS_ADDRESS": address], log: world.directory + "/polkit.log",
            firstLine: false
        ) { _, _ in
            let owned = try await bus.call(
                "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: "NameHasOwner",
                [.string(Self.polkitName)])
            if owned.first != .bool(true) {
                try await within(.seconds(20), failure: { "polkit did not take its name; its log:\n" + world.read("polkit.log") }) {
                    for await signal in owners
                    where signal.arguments.first?.string == Self.polkitName && signal.arguments.last?.string?.isEmpty == false {
                        return
                    }
                    throw TestFailure("signals ended")
                }
            }
            return try await body()
        }
    }

    /// `executable arguments` as `caller`, with this bus as the system bus.
    func run(_ caller: Caller, _ executable: String, _ arguments: [String]) async throws -> CommandResult {
        let env = ["DBUS_SYSTEM_BUS_ADDRESS": address]
        switch caller {
        case .root:
            return try await runCommand(executable, arguments, environment: env)
        case .member:
            let group = Self.glassdGroup.map(String.init) ?? "glassd"
            return try await runCommand(
                "/usr/bin/setpriv", ["--reuid=\(Self.nobody)", "--regid=\(Self.nobody)", "--groups=\(group)", executable] + arguments,
                environment: env)
        case .ally, .other:
            let user = caller == .ally ? Self.allyUser : Self.otherUser
            return try await runCommand(
                "/usr/bin/setpriv", ["--reuid=\(user)", "--regid=\(user)", "--init-groups", executable] + arguments, environment: env)
        case .stranger:
            return try await runCommand(
                "/usr/bin/setpriv", ["--reuid=\(Self.nobody)", "--regid=\(Self.nobody)", "--clear-groups", executable] + arguments,
                environment: env)
        }
    }

    /// A method call to glassd with dbus-send, which prints an error's name and message.
    func send(_ caller: Caller, _ path: String, _ interface: String, _ member: String, _ arguments: [String] = []) async throws
        -> CommandResult
    {
        try await run(
            caller, "/usr/bin/dbus-send",
            ["--bus=\(address)", "--print-reply", "--dest=\(GlassdBus.name)", path, "\(interface).\(member)"] + arguments)
    }

    /// `executable`: another glassctl (an installed one).
    func glassctl(_ caller: Caller, _ arguments: [String], executable: String = Paths.glassctl) async throws -> CommandResult {
        let command = glassctlCommandLength(arguments)
        return try await run(caller, executable, arguments.prefix(command) + ["--bus", "system"] + arguments.dropFirst(command))
    }

    /// A call to polkit's mock control interface (org.freedesktop.DBus.Mock), which must succeed.
    func polkit(_ member: String, _ signature: String = "", _ arguments: [String] = []) async throws {
        let result = try await runCommand(
            "busctl", ["--address=\(address)", "call", Self.polkitName, Self.polkitPath, "org.freedesktop.DBus.Mock", member, signature] + arguments)
        guard result.ok else { throw TestFailure("polkit mock \(member): \(result.stderr)") }
    }

    /// What glassd asked polkit, in order: (subject kind, bus name, action, flags).
    func checks() async throws -> [(kind: String, name: String, action: String, flags: Int)] {
        let result = try await runCommand(
            "busctl",
            [
                "--address=\(address)", "--json=short", "call", Self.polkitName, Self.polkitPath, "org.freedesktop.DBus.Mock",
                "GetMethodCalls", "s", "CheckAuthorization",
            ])
        guard result.ok, let object = try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any],
            let calls = (object["data"] as? [Any])?.first as? [[Any]]
        else { throw TestFailure("GetMethodCalls: \(result.stdout) \(result.stderr)") }
        return calls.compactMap { call in
            // (t timestamp, av arguments): each argument a {"type", "data"} variant.
            guard call.count == 2, let arguments = call[1] as? [[String: Any]], arguments.count == 5,
                let subject = arguments[0]["data"] as? [Any], subject.count == 2,
                let details = subject[1] as? [String: [String: Any]]
            else { return nil }
            return (
                subject[0] as? String ?? "", details["name"]?["data"] as? String ?? "", arguments[1]["data"] as? String ?? "",
                arguments[3]["data"] as? Int ?? -1
            )
        }
    }
}
