// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation
import GlassdAPI
import Testing

private let ready = RealPolkit.available || ProcessInfo.processInfo.environment["GLASSD_REQUIRE_POLKIT"] != nil
private let accessDenied = "org.freedesktop.DBus.Error.AccessDenied"
private let interactiveRequired = "org.freedesktop.DBus.Error.InteractiveAuthorizationRequired"

/// glassd as its users run it: as user glassd, with Debian's polkitd deciding from glassd's
/// action file and an administrator's rule, on a system bus with glassd's bus policy; and the
/// tree Scripts/install lays out, used as the machine would use it. Serialized: polkitd reads
/// its files from fixed system folders.
@Suite(
    "The installed service: glassd as its own user, Debian's polkitd, the staged install", .serialized,
    .timeLimit(.minutes(6)),
    .enabled(if: ready, "needs root, setpriv, polkitd, user glassd and the test accounts (Scripts/test sets them up)"))
struct InstalledServiceTests {
    /// Refused by polkit (not by the bus policy, not for want of an answer).
    private func refusedByPolkit(_ result: CommandResult) -> Bool {
        !result.ok && (result.output.contains(accessDenied) || result.output.contains(interactiveRequired))
            && (result.output.contains("Not authorized") || result.output.contains("Interactive authentication required")
                || result.output.contains("needs authorization"))
            && !result.output.contains("polkit does not answer")
    }

    /// The uid a process runs as, from /proc.
    private func uid(of pid: Int32) -> uid_t? {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("Uid:") }
        return line?.split(whereSeparator: \.isWhitespace).dropFirst().first.flatMap { uid_t($0) }
    }

    @Test("the member the rule allows pairs, updates and manages; the other member is refused by polkit; root always may; a stranger is stopped by the bus policy")
    func membersByRule() async throws {
        try await SystemBus.with { bus in
            try await bus.withRealPolkit {
                try await bus.world.withGlassd(systemBus: bus.address, user: SystemBus.daemonUser) { glassd in
                    #expect(uid(of: glassd.pid) == getpwnam(SystemBus.daemonUser)?.pointee.pw_uid, "glassd runs as its unit's user")
                    let calls = GatedCallRun.all(importFile: try GatedCallRun.historyFile(in: bus.world))
                    for call in calls {
                        let other = try await call.run(bus, .other)
                        #expect(refusedByPolkit(other), "other, \(call.name): \(other.output)")
                        let ally = try await call.run(bus, .ally)
                        // Allowed: glassd itself answers (no glasses or no such job here, or success).
                        #expect(!ally.output.contains(accessDenied) && !ally.output.contains(interactiveRequired), "ally, \(call.name): \(ally.output)")
                        let root = try await call.run(bus, .root)
                        #expect(!root.output.contains(accessDenied), "root, \(call.name): \(root.output)")
                    }
                    let mode = try await bus.send(
                        .other, GlassdBus.managerPath, "org.freedesktop.DBus.Properties", "Get", ["string:\(GlassdBus.managerInterface)", "string:Mode"])
                    #expect(mode.stdout.contains("\"translator\""), "the ally's write took: \(mode.output)")
                    let pair = try await bus.glassctl(.ally, ["pair", "--no-interactive"])
                    #expect(pair.stderr.contains(GlassdErrorName.noAdapter), "Pair ran: \(pair.stderr)")
                    let refused = try await bus.glassctl(.other, ["pair", "--no-interactive"])
                    #expect(refused.stderr.contains("needs authorization: \(GlassdBus.Action.pair)"), "\(refused.stderr)")
                    // Reading and asking are the bus policy's: any member, no polkit.
                    let history = try await bus.glassctl(.other, ["history", "-n", "1"])
                    #expect(history.ok, "\(history.output)")
                    let stranger = try await bus.send(.stranger, GlassdBus.managerPath, GlassdBus.managerInterface, "Pair", ["string:"])
                    #expect(stranger.output.contains(accessDenied) && !stranger.output.contains("Not authorized"), "\(stranger.output)")
                    // A desktop's notify-agent needs no group: the bus lets its calls through, polkit decides.
                    let agent = try await bus.send(.stranger, GlassdBus.managerPath, GlassdBus.managerInterface, "CloseNotification", ["uint32:1"])
                    #expect(refusedByPolkit(agent), "\(agent.output)")
                    let list = try await bus.send(.stranger, GlassdBus.managerPath, GlassdBus.managerInterface, "Notifications", ["uint32:0"])
                    #expect(list.output.contains(accessDenied) && !list.output.contains("Not authorized"), "their text is the group's: \(list.output)")
                    #expect(!bus.world.log().contains("polkit cannot be asked"), "\(bus.world.log())")
                }
            }
        }
    }

    @Test("without the owner annotation polkit will not answer glassd about other users' calls: the fault the annotation mends")
    func withoutOwner() async throws {
        try await SystemBus.with { bus in
            let policy = try String(contentsOfFile: Paths.root + "/dbus/org.glassd.policy", encoding: .utf8)
            let stripped = policy.split(separator: "\n", omittingEmptySubsequences: false)
                .filter { !$0.contains("org.freedesktop.policykit.owner") }.joined(separator: "\n")
            #expect(stripped != policy)
            let path = bus.world.directory + "/unowned.policy"
            try stripped.write(toFile: path, atomically: true, encoding: .utf8)
            try await bus.withRealPolkit(actions: path) {
                try await bus.world.withGlassd(systemBus: bus.address, user: SystemBus.daemonUser) { _ in
                    let ally = try await bus.send(.ally, GlassdBus.managerPath, GlassdBus.managerInterface, "ClearHistory")
                    #expect(ally.output.contains("polkit does not answer"), "\(ally.output)")
                    #expect(bus.world.log().contains("Only trusted callers"), "polkit's reason in the log: \(bus.world.log())")
                    let root = try await bus.send(.root, GlassdBus.managerPath, GlassdBus.managerInterface, "ClearHistory")
                    #expect(root.ok, "\(root.output)")
                }
            }
        }
    }

    @Test("Scripts/install --root lays out a tree that works: its bus policy, its polkit actions, its binary as the unit's user with its config; its unit verifies and is rated 2.0 or better")
    func stagedInstall() async throws {
        let root = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        _ = chmod(root, 0o755)  // glassd's user walks into it
        do {
            let install = try await runCommand(Paths.root + "/Scripts/install", ["--root", root, "--bin-dir", Paths.bin])
            try #require(install.ok, "\(install.output)")
            let unitPath = root + "/etc/systemd/system/glassd.service"
            let unit = try String(contentsOfFile: unitPath, encoding: .utf8)
            let execStart = try #require(unit.split(separator: "\n").first { $0.hasPrefix("ExecStart=") }?.dropFirst("ExecStart=".count))
            let user = try #require(unit.split(separator: "\n").first { $0.hasPrefix("User=") }?.dropFirst("User=".count))
            #expect(user == SystemBus.daemonUser)

            // verify looks for ExecStart= on this machine, and for the targets the unit names under
            // --root: so the staged unit is checked with its ExecStart pointed into the root.
            #expect(FileManager.default.isExecutableFile(atPath: root + execStart))
            let checked = root + "/glassd.service"
            try unit.replacingOccurrences(of: "ExecStart=\(execStart)\n", with: "ExecStart=\(root)\(execStart)\n")
                .write(toFile: checked, atomically: true, encoding: .utf8)
            let verify = try await runCommand("systemd-analyze", ["verify", checked])
            #expect(verify.ok && verify.output.isEmpty, "\(verify.output)")
            let security = try await runCommand("systemd-analyze", ["security", "--offline=true", "--no-pager", unitPath])
            let line = try #require(security.stdout.split(separator: "\n").first { $0.contains("Overall exposure level") }, "\(security.output)")
            let score = line.split(separator: ":").last?.split(separator: " ").first.flatMap { Double($0) }
            #expect(score != nil && score! <= 2.0, "\(line)")

            // What Scripts/install does outside a staging root: /etc/glassd is root:glassd, 0750, its file 0640.
            let group = try #require(SystemBus.glassdGroup)
            for path in [root + "/etc/glassd", root + "/etc/glassd/glassd.conf"] { #expect(chown(path, 0, group) == 0) }
            let policies = root + "/usr/share/dbus-1/system.d/org.glassd.conf"
            try await SystemBus.with(policy: policies) { bus in
                try await bus.withRealPolkit(actions: root + "/usr/share/polkit-1/actions/org.glassd.policy") {
                    try await bus.world.withGlassd(
                        config: root + "/etc/glassd/glassd.conf", systemBus: bus.address, user: String(user),
                        executable: root + execStart
                    ) { _ in
                        let manager = (GlassdBus.managerPath, GlassdBus.managerInterface)
                        let allowed = try await bus.send(.ally, manager.0, manager.1, "ClearHistory")
                        #expect(allowed.ok, "\(allowed.output)")
                        let refused = try await bus.send(.other, manager.0, manager.1, "ClearHistory")
                        #expect(refusedByPolkit(refused), "\(refused.output)")
                        let glassctl = root + "/usr/local/bin/glassctl"
                        let mode = try await bus.glassctl(.ally, ["mode", "translator"], executable: glassctl)
                        #expect(mode.ok, "\(mode.output)")
                        let refusedMode = try await bus.glassctl(.other, ["mode", "assistant", "--no-interactive"], executable: glassctl)
                        #expect(refusedByPolkit(refusedMode), "\(refusedMode.output)")
                        let read = try await bus.glassctl(.other, ["status", "--json"], executable: glassctl)
                        #expect(read.ok && read.stdout.contains("translator"), "\(read.output)")
                    }
                }
            }
        }
    }
}
