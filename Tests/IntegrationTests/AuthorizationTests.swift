// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import Foundation
import GlassdAPI
import Testing

private let ready = SystemBus.available || ProcessInfo.processInfo.environment["GLASSD_REQUIRE_POLKIT"] != nil
private let accessDenied = "org.freedesktop.DBus.Error.AccessDenied"

/// glassd (as user glassd) on a system-like bus with the project's bus policy, polkit
/// (python-dbusmock's polkitd template, for what only a fake can stage or record: what glassd
/// asked, a hang, a challenge, polkit gone) and callers as root, as a member of group glassd and
/// as a stranger (nobody). The real polkitd is InstalledServiceTests'.
@Suite(
    "Who may do what: polkit per action and private answers on a system bus", .serialized, .timeLimit(.minutes(5)),
    .enabled(if: ready, "needs root, setpriv, user and group glassd and python3-dbusmock (Scripts/test sets them up)"))
struct AuthorizationTests {
    /// glassd as the unit runs it (user glassd) on the system bus, with polkit's mock or none.
    private func withGlassd(polkit: Bool = true, _ body: (SystemBus) async throws -> Void) async throws {
        try await SystemBus.with { bus in
            let user = SystemBus.daemonUser
            if polkit {
                try await bus.withPolkit { try await bus.world.withGlassd(systemBus: bus.address, user: user) { _ in try await body(bus) } }
            } else {
                try await bus.world.withGlassd(systemBus: bus.address, user: user) { _ in try await body(bus) }
            }
        }
    }

    private func output(_ result: CommandResult) -> String { result.output }

    @Test("a member is refused each action until polkit allows it, then each call runs; root is never asked; a stranger is stopped by the bus policy")
    func actions() async throws {
        try await withGlassd { bus in
            let calls = GatedCallRun.all(importFile: try GatedCallRun.historyFile(in: bus.world))
            for call in calls {
                let refused = try await call.run(bus, .member)
                #expect(!refused.ok && output(refused).contains(accessDenied), "\(call.name): \(output(refused))")
                #expect(output(refused).contains("Not authorized: \(call.action)."), "\(call.name): \(output(refused))")
            }
            #expect(try await bus.checks().map(\.action) == calls.map(\.action))

            try await bus.polkit(
                "SetAllowed", "as", ["4", GlassdBus.Action.pair, GlassdBus.Action.update, GlassdBus.Action.manage, GlassdBus.Action.notify])
            for call in calls {
                // Allowed: glassd itself answers (no glasses or no such job here, or success).
                let allowed = try await call.run(bus, .member)
                #expect(!output(allowed).contains(accessDenied), "\(call.name): \(output(allowed))")
            }
            let mode = try await bus.send(.member, GlassdBus.managerPath, "org.freedesktop.DBus.Properties", "Get", ["string:\(GlassdBus.managerInterface)", "string:Mode"])
            #expect(mode.stdout.contains("\"translator\""), "\(output(mode))")
            let pair = try await bus.glassctl(.member, ["pair", "--no-interactive"])
            #expect(pair.stderr.contains(GlassdErrorName.noAdapter), "Pair ran: \(pair.stderr)")
            let asked = try await bus.checks().count
            #expect(asked == 2 * calls.count + 1)

            for call in calls {
                let root = try await call.run(bus, .root)
                #expect(!output(root).contains(accessDenied), "root, \(call.name): \(output(root))")
            }
            let stranger = try await bus.send(.stranger, GlassdBus.managerPath, GlassdBus.managerInterface, "Pair", ["string:"])
            #expect(output(stranger).contains(accessDenied) && !output(stranger).contains("Not authorized"), "\(output(stranger))")
            #expect(try await bus.checks().count == asked, "root or the stranger was put to polkit")
        }
    }

    @Test("glassd asks about the caller's bus name, interactive as the caller allows; a challenge it may not raise is InteractiveAuthorizationRequired; glassctl says what is needed")
    func subjectAndFlags() async throws {
        try await withGlassd { bus in
            let plain = try await bus.glassctl(.member, ["pair", "--no-interactive"])
            #expect(plain.stderr.contains("glassctl: needs authorization: org.glassd.pair\n"), "\(plain.stderr)")
            _ = try await bus.glassctl(.member, ["pair", "--interactive"])
            let asked = try await bus.checks()
            #expect(asked.count == 2)
            #expect(asked.allSatisfy { $0.kind == "system-bus-name" && $0.name.hasPrefix(":1.") && $0.action == GlassdBus.Action.pair })
            #expect(asked.map(\.flags) == [0, 1])

            // polkit would ask for a password, but the caller allows no dialog.
            try await bus.polkit(
                "AddMethod", "sssss",
                ["org.freedesktop.PolicyKit1.Authority", "CheckAuthorization", "(sa{sv})sa{ss}us", "(bba{ss})", "ret = (False, True, {})"])
            let challenged = try await bus.glassctl(.member, ["pair", "--no-interactive"])
            #expect(challenged.stderr.contains("org.freedesktop.DBus.Error.InteractiveAuthorizationRequired"), "\(challenged.stderr)")
            #expect(challenged.stderr.contains("needs authorization: org.glassd.pair (run glassctl on a terminal"), "\(challenged.stderr)")
            let stranger = try await bus.glassctl(.stranger, ["pair"])
            #expect(stranger.stderr.contains("needs root or membership in group glassd"), "\(stranger.stderr)")
        }
    }

    @Test("polkit absent: members are refused (fail closed), said once in the log; root still may")
    func polkitAbsent() async throws {
        try await withGlassd(polkit: false) { bus in
            for _ in 0..<2 {
                let refused = try await bus.send(.member, GlassdBus.managerPath, GlassdBus.managerInterface, "ClearHistory")
                #expect(output(refused).contains(accessDenied) && output(refused).contains("polkit does not answer"), "\(output(refused))")
            }
            let root = try await bus.send(.root, GlassdBus.managerPath, GlassdBus.managerInterface, "ClearHistory")
            #expect(root.ok, "\(output(root))")
            let log = bus.world.log()
            #expect(log.components(separatedBy: "polkit cannot be asked").count == 2, "\(log)")
        }
    }

    @Test("while polkit hangs over one member's call, another member's question is answered; the held call ends when polkit does")
    func polkitHangs() async throws {
        try await withGlassd { bus in
            try await bus.polkit("SimulateHang", "b", ["true"])
            let watcher = try await BusConnection.open(.address(bus.address))
            let called = try await watcher.signals(
                SignalMatch(sender: SystemBus.polkitName, interface: "org.freedesktop.DBus.Mock", member: "MethodCalled"))
            async let held = bus.glassctl(.member, ["pair", "--no-interactive"])
            try await within(.seconds(20), failure: { "glassd did not ask polkit" }) {
                for await signal in called where signal.arguments.first?.string == "CheckAuthorization" { return }
                throw TestFailure("signals ended")
            }
            let query = try await bus.glassctl(.member, ["query", "What is the capital of France?"])
            #expect(query.ok && !query.stdout.isEmpty, "\(query.stderr)")
            try await bus.polkit("ReleaseHangingCalls")
            let pair = try await held
            #expect(pair.stderr.contains("Not authorized: org.glassd.pair."), "\(pair.stderr)")
            await watcher.close()
        }
    }

    @Test("QueryWith as Query: a member asks with --speak and is answered, polkit asked only Display's check; a stranger is stopped by the bus policy")
    func queryWithAsQuery() async throws {
        try await withGlassd { bus in
            let asked = try await bus.checks().count
            let member = try await bus.glassctl(.member, ["query", "--speak", "What is the capital of France?"])
            #expect(member.ok && !member.stdout.isEmpty, "\(member.stderr)")
            // Only Display's check, as for Query (the answer may show and speak on the glasses), without a dialog.
            let checks = try await bus.checks().dropFirst(asked)
            #expect(checks.count == 1 && checks.allSatisfy { $0.action == GlassdBus.Action.manage && $0.flags == 0 }, "\(checks)")
            let stranger = try await bus.send(
                .stranger, GlassdBus.managerPath, GlassdBus.managerInterface, "QueryWith", ["string:hello"])
            #expect(output(stranger).contains(accessDenied) && !output(stranger).contains("Not authorized"), "\(output(stranger))")
        }
    }

    @Test("a stranger subscribed to every glassd signal gets no question or answer text while a member asks; the member's own stream does; state changes reach everyone")
    func privateAnswers() async throws {
        try await withGlassd { bus in
            let listener = Paths.root + "/Tests/World/signal_listener.py"
            try await withBackground(
                "/usr/bin/setpriv",
                ["--reuid=\(SystemBus.nobody)", "--regid=\(SystemBus.nobody)", "--clear-groups", "/usr/bin/python3", listener, bus.address],
                log: bus.world.directory + "/listener.log", firstLine: true
            ) { stranger, line in
                #expect(line == "READY")
                let question = "Which river runs through Paris?"
                let query = try await bus.glassctl(.member, ["query", question])
                #expect(query.ok && query.stdout.contains("Paris"), "the member's own answer: \(query.stdout) \(query.stderr)")
                // A change everyone may see ends what the stranger is waited for.
                let mode = try await bus.send(
                    .root, GlassdBus.managerPath, "org.freedesktop.DBus.Properties", "Set",
                    ["string:\(GlassdBus.managerInterface)", "string:Mode", "variant:string:translator"])
                #expect(mode.ok, "\(output(mode))")
                let seen = try await within(.seconds(20), failure: { "the stranger saw no PropertiesChanged with the mode" }) {
                    var lines: [String] = []
                    while let line = try await stranger.nextLine() {
                        lines.append(line)
                        if line.hasPrefix("PropertiesChanged") && line.contains("translator") { return lines }
                    }
                    throw TestFailure("the listener ended: \(lines)")
                }
                for secret in [GlassdBus.Signal.transcribed, GlassdBus.Signal.answerDelta, GlassdBus.Signal.answered, GlassdBus.Signal.queryFailed] {
                    #expect(!seen.contains { $0.hasPrefix(secret) }, "\(secret) reached a stranger: \(seen)")
                }
                #expect(!seen.contains { $0.contains("Paris") }, "\(seen)")
            }
        }
    }
}
