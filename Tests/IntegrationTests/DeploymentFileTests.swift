// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation
import GlassdAPI
import Testing

@Suite("systemd and D-Bus files", .timeLimit(.minutes(5)))
struct DeploymentFileTests {
    @Test("systemd-analyze verify prints nothing for glassd.service")
    func verifyUnit() async throws {
        // verify insists that ExecStart exists: point it at the binary just built.
        let dir = try Paths.temporaryDirectory()
        let unit = try String(contentsOfFile: Paths.root + "/systemd/glassd.service", encoding: .utf8)
        #expect(unit.contains("ExecStart=/usr/local/bin/glassd\n"))
        #expect(unit.contains("\nLimitCORE=0\n"), "no core dump holds questions, answers or the key")
        try unit.replacingOccurrences(of: "ExecStart=/usr/local/bin/glassd", with: "ExecStart=\(Paths.glassd)")
            .write(toFile: dir + "/glassd.service", atomically: true, encoding: .utf8)
        let result = try await runCommand("systemd-analyze", ["verify", dir + "/glassd.service"])
        #expect(result.ok)
        #expect(result.stdout.isEmpty && result.stderr.isEmpty, "\(result.stdout)\(result.stderr)")
    }

    @Test("the notification agent's user unit passes systemd-analyze verify, as a user unit and as any; Scripts/install puts it in /etc/systemd/user with ExecStart in its prefix")
    func verifyNotifyAgentUnit() async throws {
        let dir = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let unit = try String(contentsOfFile: Paths.root + "/systemd/glassd-notify-agent.service", encoding: .utf8)
        let execStart = "ExecStart=/usr/local/bin/glassctl notify-agent\n"
        #expect(unit.contains(execStart) && unit.contains("\nRestart=on-failure\n") && unit.contains("\nType=notify\n"))
        #expect(unit.contains("\nPartOf=graphical-session.target\n") && unit.contains("\nWantedBy=graphical-session.target\n"))
        try unit.replacingOccurrences(of: execStart, with: "ExecStart=\(Paths.glassctl) notify-agent\n")
            .write(toFile: dir + "/glassd-notify-agent.service", atomically: true, encoding: .utf8)
        // A user manager's verify needs a runtime directory of its own.
        let runtime = dir + "/runtime"
        try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        for mode in [["--user"], []] {
            let result = try await runCommand(
                "systemd-analyze", mode + ["verify", dir + "/glassd-notify-agent.service"], environment: ["XDG_RUNTIME_DIR": runtime])
            #expect(result.ok && result.stdout.isEmpty && result.stderr.isEmpty, "\(mode) \(result.stdout)\(result.stderr)")
        }
        let root = dir + "/root"
        let install = try await runCommand(Paths.root + "/Scripts/install", ["--root", root, "--bin-dir", Paths.bin, "--prefix", "/opt/glassd"])
        #expect(install.ok, "\(install.stderr)")
        let installed = try String(contentsOfFile: root + "/etc/systemd/user/glassd-notify-agent.service", encoding: .utf8)
        #expect(installed == unit.replacingOccurrences(of: execStart, with: "ExecStart=/opt/glassd/bin/glassctl notify-agent\n"))
        #expect(FileManager.default.isExecutableFile(atPath: root + "/opt/glassd/bin/glassctl"))
    }

    @Test("the README's unit for the embedded backend passes systemd-analyze verify")
    func verifyReadmeBackendUnit() async throws {
        let readme = try String(contentsOfFile: Paths.root + "/README.md", encoding: .utf8)
        let start = try #require(readme.range(of: "# /etc/systemd/system/glassd-backend.service\n"), "the README shows no unit")
        let end = try #require(readme.range(of: "```", range: start.upperBound..<readme.endIndex))
        let unit = String(readme[start.upperBound..<end.lowerBound])
        #expect(unit.contains("ExecStart=/path/to/glassd/Scripts/backend "))
        let dir = try Paths.temporaryDirectory()
        try unit.replacingOccurrences(of: "/path/to/glassd", with: Paths.root)
            .write(toFile: dir + "/glassd-backend.service", atomically: true, encoding: .utf8)
        let result = try await runCommand("systemd-analyze", ["verify", dir + "/glassd-backend.service"])
        #expect(result.ok)
        #expect(result.stdout.isEmpty && result.stderr.isEmpty, "\(result.stdout)\(result.stderr)")
    }

    @Test("systemd-analyze security rates the unit 2.0 or better")
    func securityExposure() async throws {
        let result = try await runCommand(
            "systemd-analyze", ["security", "--offline=true", "--no-pager", Paths.root + "/systemd/glassd.service"])
        let line = try #require(result.stdout.split(separator: "\n").first { $0.contains("Overall exposure level") })
        // "→ Overall exposure level for glassd.service: 1.3 OK 🙂"
        let score = line.split(separator: ":").last?.split(separator: " ").first.flatMap { Double($0) }
        #expect(score != nil && score! <= 2.0, "\(line)")
    }

    @Test("Scripts/install lays the polkit actions out where polkit reads them, valid against polkit's DTD, one per gated call")
    func polkitPolicy() async throws {
        let dir = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let install = try await runCommand(Paths.root + "/Scripts/install", ["--bin-dir", Paths.bin], environment: ["DESTDIR": dir])
        #expect(install.ok, "\(install.stderr)")
        let installed = dir + "/usr/share/polkit-1/actions/org.glassd.policy"
        let dtd = "/usr/share/polkit-1/policyconfig-1.dtd"
        try #require(FileManager.default.fileExists(atPath: dtd), "polkit's DTD is missing (Debian's polkitd)")
        let lint = try await runCommand("xmllint", ["--noout", "--dtdvalid", dtd, installed])
        #expect(lint.ok, "\(lint.stderr)")
        let policy = try String(contentsOfFile: installed, encoding: .utf8)
        #expect(policy.contains("<vendor>glassd</vendor>"))
        for action in Set(GlassdBus.Action.calls.map(\.action)) {
            #expect(policy.contains("<action id=\"\(action)\">"), "\(action)")
        }
        // The defaults the project promises: pairing and managing for the person at the machine,
        // updates with an administrator's password, kept for a while.
        let defaults = Dictionary(
            uniqueKeysWithValues: policy.components(separatedBy: "<action id=\"").dropFirst().map { block in
                (String(block.prefix { $0 != "\"" }), block)
            })
        for action in [GlassdBus.Action.pair, GlassdBus.Action.manage] {
            #expect(defaults[action]?.contains("<allow_active>yes</allow_active>") == true, "\(action)")
            #expect(defaults[action]?.contains("<allow_any>auth_admin</allow_any>") == true, "\(action)")
            #expect(defaults[action]?.contains("<allow_inactive>auth_admin</allow_inactive>") == true, "\(action)")
        }
        #expect(defaults[GlassdBus.Action.update]?.components(separatedBy: ">auth_admin_keep<").count == 4)
        // polkit answers glassd about other users' calls only as an owner of each action: the unit's user.
        let unit = try String(contentsOfFile: Paths.root + "/systemd/glassd.service", encoding: .utf8)
        let user = try #require(unit.split(separator: "\n").first { $0.hasPrefix("User=") }?.dropFirst("User=".count))
        for (action, block) in defaults {
            #expect(block.contains("<annotate key=\"org.freedesktop.policykit.owner\">unix-user:\(user)</annotate>"), "\(action)")
        }
    }

    @Test("a system bus loads the glassd policy")
    func busPolicyParses() async throws {
        let dir = try Paths.temporaryDirectory()
        let config = try writeBusConfig(in: dir, type: "system", include: [Paths.root + "/dbus/org.glassd.conf"])
        let address = try await withBackground(
            "/usr/bin/dbus-daemon", ["--config-file=\(config)", "--nofork", "--print-address=1"],
            log: dir + "/dbus.log", firstLine: true
        ) { _, address in address }
        #expect(address.hasPrefix("unix:path=\(dir)/system.socket"))
        let service = try String(contentsOfFile: Paths.root + "/dbus/org.glassd.service", encoding: .utf8)
        #expect(service.contains("Name=org.glassd\n") && service.contains("SystemdService=glassd.service\n"))
    }

    @Test(
        "the bus policy: anyone may introspect and read, only root and group glassd may call or write",
        .enabled(if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv"), "needs root to act as nobody"))
    func busPolicyEnforced() async throws {
        let dir = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        _ = chmod(dir, 0o755)  // nobody must reach the socket
        let config = try writeBusConfig(in: dir, type: "system", include: [Paths.root + "/dbus/org.glassd.conf"])
        try await withBackground(
            "/usr/bin/dbus-daemon", ["--config-file=\(config)", "--nofork", "--print-address=1"],
            log: dir + "/dbus.log", firstLine: true
        ) { _, address in
            let notify = try NotifySocket(path: dir + "/notify")
            // The (empty) config file exists before glassd starts and reads it.
            try "".write(toFile: dir + "/none.conf", atomically: true, encoding: .utf8)
            try await withBackground(
                Paths.glassd, ["--bus", "system", "--state-dir", dir + "/state", "--config", dir + "/none.conf"],
                environment: ["DBUS_SYSTEM_BUS_ADDRESS": address, "NOTIFY_SOCKET": notify.path], log: dir + "/glassd.log",
                firstLine: false
            ) { _, _ in
                try #require(await notify.wait(for: "READY=1"))
                func busctl(asNobody: Bool, _ arguments: [String]) async throws -> CommandResult {
                    let command = ["busctl", "--address=\(address)"] + arguments
                    return asNobody
                        ? try await runCommand("setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups"] + command)
                        : try await runCommand(command[0], Array(command.dropFirst()))
                }
                let manager = ["org.glassd", "/org/glassd", "org.glassd.Manager1"]
                let read = try await busctl(asNobody: true, ["get-property"] + manager + ["Version"])
                #expect(read.ok, "\(read.stderr)")
                #expect(read.stdout == "s \"\(glassdVersion)\"\n")
                let introspect = try await busctl(asNobody: true, ["introspect", "org.glassd", "/org/glassd"])
                #expect(introspect.ok)
                #expect(introspect.stdout.contains(".Query "), "\(introspect.stdout)")
                let call = try await busctl(asNobody: true, ["call"] + manager + ["History", "u", "1"])
                #expect(call.status == 1 && call.stderr == "Call failed: Access denied\n", "\(call.stderr)")
                let write = try await busctl(asNobody: true, ["set-property"] + manager + ["Mode", "s", "translator"])
                #expect(
                    write.status == 1
                        && write.stderr == "Failed to set property Mode on interface org.glassd.Manager1: Access denied\n",
                    "\(write.stderr)")
                let own = try await busctl(asNobody: false, ["call"] + manager + ["History", "u", "1"])
                #expect(own.ok, "\(own.stderr)")
                #expect(own.stdout == "a(xsss) 0\n")
            }
        }
    }
}
