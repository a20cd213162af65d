// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import Foundation
import GlassdAPI
import GlassdContract
import Testing

/// glassctl notify-agent between a desktop (python-dbusmock's notification daemon on a private
/// session bus, notify-send as the application) and a stand-in glassd on another bus.
///
/// What must not be forwarded is checked with a notification sent after it that must be: the
/// agent keeps their order, so once the later one reached glassd, the earlier one would have too.
@Suite("glassctl notify-agent", .timeLimit(.minutes(5)))
struct NotifyAgentTests {
    /// Long enough that the desktop's id is never missed on a loaded host.
    static let wait = ["--reply-wait-ms", "20000"]

    @Test("a notification reaches glassd with its app, summary, body, urgency, category and the desktop's id; its replacement keeps the id; the desktop closing it closes it")
    func forwards() async throws {
        try await NotifyWorld.with { world in
            try await world.withDesktopDaemon {
                try await world.withGlassd {
                    try await world.withAgent(Self.wait) { _ in
                        try await world.withGlassdCalls { calls in
                            let sent = try await world.notifySend(
                                ["-p", "-a", "Mail", "-u", "critical", "-c", "email.arrived", "New mail", "From Ann: lunch?"])
                            let id = try #require(UInt32(sent.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
                            let first = try #require(try await nextCalls(1, calls, world: world).first?.notification)
                            #expect(
                                first
                                    == GlassdBus.Manager1.NotificationFields(
                                        appName: "Mail", summary: "New mail", body: "From Ann: lunch?", urgency: 2, category: "email.arrived",
                                        desktopID: id))

                            _ = try await world.notifySend(["-r", "\(id)", "-a", "Mail", "New mail (2)", "From Ann and Bob"])
                            let second = try #require(try await nextCalls(1, calls, world: world).first?.notification)
                            #expect(second.desktopID == id)
                            #expect(second.summary == "New mail (2)" && second.body == "From Ann and Bob" && second.urgency == 1)
                            #expect(second.category == nil)

                            try await world.desktopCloses(id)
                            let closed = try await nextCalls(1, calls, world: world)
                            #expect(closed.first?.closed == id, "\(closed)")
                        }
                    }
                }
            }
        }
    }

    @Test("GNOME's org.gtk.Notifications: AddNotification reaches glassd (the app id as its app, urgent as critical) with an id of the agent's; the same app and id again keeps it; RemoveNotification closes it; a deny rule holds one back")
    func gtkNotifications() async throws {
        try await NotifyWorld.with { world in
            try world.writeRules("[[rule]]\napp = \"org.example.Spammy\"\naction = \"deny\"\n")
            try await world.withGtkNotifications {
                try await world.withGlassd {
                    try await world.withAgent { _ in
                        try await world.withGlassdCalls { calls in
                            try await world.gtkAdd(app: "org.example.Spammy", id: "ad", title: "Buy now", body: "", priority: "urgent")
                            try await world.gtkAdd(app: "org.gnome.Calendar", id: "ev1", title: "Standup", body: "In 5 minutes", priority: "urgent")
                            let first = try #require(try await nextCalls(1, calls, world: world).first?.notification)
                            #expect(
                                first
                                    == GlassdBus.Manager1.NotificationFields(
                                        appName: "org.gnome.Calendar", summary: "Standup", body: "In 5 minutes", urgency: 2,
                                        desktopID: first.desktopID))
                            #expect(first.desktopID != 0)

                            try await world.gtkAdd(app: "org.gnome.Calendar", id: "ev1", title: "Standup", body: "Now", priority: "low")
                            let second = try #require(try await nextCalls(1, calls, world: world).first?.notification)
                            #expect(second.desktopID == first.desktopID)
                            #expect(second.body == "Now" && second.urgency == 0)

                            try await world.gtkRemove(app: "org.gnome.Calendar", id: "ev1")
                            let closed = try await nextCalls(1, calls, world: world)
                            #expect(closed.first?.closed == first.desktopID, "\(closed)")
                        }
                    }
                }
            }
        }
    }

    @Test("a deny rule, min_urgency and quiet hours hold notifications back; critical passes quiet hours and min_urgency; an allow rule passes min_urgency")
    func rules() async throws {
        try await NotifyWorld.with { world in
            // Quiet hours from an hour ago to an hour from now, local time (across midnight or not).
            let now = Calendar.current.dateComponents([.hour, .minute], from: Date())
            let minute = (now.hour ?? 0) * 60 + (now.minute ?? 0)
            func clock(_ m: Int) -> String { String(format: "%02d:%02d", ((m + 1440) % 1440) / 60, ((m + 1440) % 1440) % 60) }
            try world.writeRules(
                """
                min_urgency = "normal"
                [[rule]]
                app = "spammy"
                action = "deny"
                [[rule]]
                category = "im"
                action = "allow"
                [quiet_hours]
                start = "\(clock(minute - 60))"
                end = "\(clock(minute + 60))"
                """)
            try await world.withDesktopDaemon {
                try await world.withGlassd {
                    try await world.withAgent(Self.wait) { _ in
                        try await world.withGlassdCalls { calls in
                            _ = try await world.notifySend(["-a", "Spammy", "-u", "critical", "Buy now"])  // rule 1
                            _ = try await world.notifySend(["-a", "Mail", "-u", "low", "Newsletter"])  // min_urgency
                            _ = try await world.notifySend(["-a", "Mail", "-u", "normal", "Quiet"])  // quiet hours
                            _ = try await world.notifySend(["-a", "Chat", "-u", "low", "-c", "im.received", "Allowed but quiet"])
                            _ = try await world.notifySend(["-a", "Alarm", "-u", "critical", "Wake up"])
                            let received = try await nextCalls(1, calls, world: world)
                            #expect(received.map(\.notification?.summary) == ["Wake up"], "\(received)")
                        }
                    }
                }
            }
        }
        // Outside quiet hours (none here), an allow rule lets a low one past min_urgency.
        try await NotifyWorld.with { world in
            try world.writeRules("min_urgency = \"critical\"\n[[rule]]\ncategory = \"im\"\naction = \"allow\"\n")
            try await world.withDesktopDaemon {
                try await world.withGlassd {
                    try await world.withAgent(Self.wait) { _ in
                        try await world.withGlassdCalls { calls in
                            _ = try await world.notifySend(["-a", "Mail", "-u", "normal", "Below the minimum"])
                            _ = try await world.notifySend(["-a", "Chat", "-u", "low", "-c", "im.received", "Allowed"])
                            let received = try await nextCalls(1, calls, world: world)
                            #expect(received.map(\.notification?.summary) == ["Allowed"], "\(received)")
                        }
                    }
                }
            }
        }
    }

    @Test("--dry-run prints a line per notification, what would be sent or which rule held it back, and the calendar's event (none), and sends nothing")
    func dryRun() async throws {
        try await NotifyWorld.with { world in
            try world.writeRules("[[rule]]\napp = \"Spammy\"\naction = \"deny\"\n")
            try await world.withDesktopDaemon {
                try await world.withGlassd {
                    try await world.withAgent(Self.wait + ["--dry-run"]) { agent in
                        _ = try await world.notifySend(["-a", "Mail", "-c", "email.arrived", "New \"mail\"", "body"])
                        _ = try await world.notifySend(["-a", "Spammy", "Buy now"])
                        // The calendar's line (no EDS here: no event) comes whenever its read is done.
                        let all = try await within(.seconds(20), failure: { "no dry-run lines; log:\n" + world.read("agent.log") }) {
                            [try await agent.nextLine(), try await agent.nextLine(), try await agent.nextLine()]
                        }
                        #expect(all.filter { $0?.hasPrefix("event ") == true } == ["event none"])
                        let lines = all.filter { $0?.hasPrefix("event ") != true }
                        #expect(
                            lines == [
                                #"send app="Mail" summary="New \"mail\"" urgency=normal category="email.arrived" desktop_id=1"#,
                                #"skip app="Spammy" summary="Buy now" urgency=normal category=- desktop_id=2: blocked by rule 1 (deny app "Spammy")"#,
                            ])
                        try await world.desktopCloses(1)
                        let close = try await within(.seconds(20), failure: { "no close line" }) { try await agent.nextLine() }
                        #expect(close == "close desktop_id=1")
                        #expect(try await world.recordedCalls().isEmpty)
                    }
                }
            }
        }
    }

    @Test("glassd stopped: what comes meanwhile waits and is delivered, in order, when it is back")
    func glassdRestarts() async throws {
        try await NotifyWorld.with { world in
            try await world.withDesktopDaemon {
                try await world.withGlassdCalls { calls in
                    try await world.withAgent(Self.wait) { _ in
                        try await world.withGlassd {
                            _ = try await world.notifySend(["-a", "A", "Before"])
                            #expect(try await nextCalls(1, calls, world: world).map(\.notification?.summary) == ["Before"])
                        }
                        // The stand-in is gone (its process has exited).
                        _ = try await world.notifySend(["-a", "A", "While away 1"])
                        _ = try await world.notifySend(["-a", "A", "While away 2"])
                        try await world.withGlassd {
                            // The stand-in signals a call before it answers; stopped in between, the agent
                            // never had the answer to "Before" and sends it again: at least once, as a
                            // glassd stopped before it showed it would want. Then the two in order.
                            var delivered = try await nextCalls(2, calls, world: world)
                            if delivered.first?.notification?.desktopID == 1 {
                                #expect(delivered.first?.notification?.summary == "Before")
                                delivered = Array(delivered.dropFirst()) + (try await nextCalls(1, calls, world: world))
                            }
                            #expect(delivered.map(\.notification?.summary) == ["While away 1", "While away 2"], "\(delivered)")
                            #expect(delivered.map(\.notification?.desktopID) == [2, 3])
                        }
                    }
                }
            }
        }
    }

    @Test("while glassd is away at most 20 notifications wait: the oldest are dropped, the newest delivered in order")
    func boundedQueue() async throws {
        try await NotifyWorld.with { world in
            try await world.withDesktopDaemon {
                try await world.withGlassdCalls { calls in
                    try await world.withAgent(Self.wait) { _ in
                        for n in 1...23 { _ = try await world.notifySend(["-a", "A", "Waiting \(n)"]) }
                        try await world.withGlassd {
                            let delivered = try await nextCalls(20, calls, world: world)
                            #expect(delivered.map(\.notification?.summary) == (4...23).map { "Waiting \($0)" }, "\(delivered)")
                            // Nothing more: one sent after them is the next call.
                            _ = try await world.notifySend(["-a", "A", "After"])
                            #expect(try await nextCalls(1, calls, world: world).map(\.notification?.summary) == ["After"])
                        }
                        #expect(world.read("agent.log").contains("dropped the oldest"))
                    }
                }
            }
        }
    }

    @Test("a desktop that does not answer within --reply-wait-ms: forwarded at once, without its id; text beyond glassd's 4 KiB is cut at a character")
    func slowDesktop() async throws {
        try await NotifyWorld.with { world in
            try await world.withSlowDesktopDaemon(seconds: 3) {
                try await world.withGlassd {
                    try await world.withAgent(["--reply-wait-ms", "100"]) { _ in
                        try await world.withGlassdCalls { calls in
                            let long = String(repeating: "é", count: 5000)
                            async let sent = world.notifySend(["-p", "-a", "Slow", "Summary", long])
                            let call = try #require(try await nextCalls(1, calls, world: world).first?.notification)
                            #expect(call.desktopID == 0)
                            #expect(call.summary == "Summary")
                            let body = try #require(call.body)
                            #expect(body.allSatisfy { $0 == "é" } && !body.isEmpty)
                            #expect(("Slow" + "Summary" + body).utf8.count <= 4000)
                            // The desktop's answer, when it came, was still its own.
                            #expect((try await sent).stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "42")
                        }
                    }
                }
            }
        }
    }

    @Test("the desktop's notification daemon restarted: forwarding goes on, with the new daemon's ids")
    func desktopDaemonRestarts() async throws {
        try await NotifyWorld.with { world in
            try await world.withGlassd {
                try await world.withGlassdCalls { calls in
                    try await world.withAgent(Self.wait) { _ in
                        try await world.withDesktopDaemon {
                            _ = try await world.notifySend(["-a", "A", "First daemon"])
                            _ = try await world.notifySend(["-a", "A", "First daemon again"])
                            #expect(try await nextCalls(2, calls, world: world).map(\.notification?.desktopID) == [1, 2])
                        }
                        try await world.withDesktopDaemon {
                            _ = try await world.notifySend(["-a", "A", "Second daemon"])
                            let call = try await nextCalls(1, calls, world: world)
                            #expect(call.first?.notification?.summary == "Second daemon")
                            #expect(call.first?.notification?.desktopID == 1, "the new daemon's own id, from its reply")
                        }
                    }
                }
            }
        }
    }

    @Test("a lost bus connection, the session's or glassd's, ends the agent with a failure (for systemd to restart it)", arguments: ["session", "system"])
    func connectionLost(bus: String) async throws {
        try await NotifyWorld.with { world in
            let directory = world.directory + "/lost"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let config = try writeBusConfig(in: directory, type: "session")
            let notify = try NotifySocket(path: directory + "/notify")
            let agent = try await withBackground(
                "/usr/bin/dbus-daemon", ["--config-file=\(config)", "--nofork", "--print-address=1"], log: directory + "/bus.log", firstLine: true
            ) { _, address in
                let environment = [
                    "DBUS_SESSION_BUS_ADDRESS": bus == "session" ? address : world.session,
                    "DBUS_SYSTEM_BUS_ADDRESS": bus == "system" ? address : world.system, "NOTIFY_SOCKET": notify.path,
                    "XDG_CONFIG_HOME": world.directory,
                ]
                let agent = Task { try await runCommand(Paths.glassctl, ["notify-agent", "--bus", "system"], environment: environment) }
                guard await notify.wait(for: "READY=1") else { throw TestFailure("the agent never became ready") }
                return agent
            }
            // That bus is gone.
            let result = try await within(.seconds(20), failure: { "the agent did not end" }) { try await agent.value }
            #expect(result.status == 1)
            let which = bus == "session" ? "the session bus connection was lost" : "the connection to glassd's bus was lost"
            // Last; before it only the agent's log lines (here: that there is no calendar).
            let lines = result.stderr.split(separator: "\n", omittingEmptySubsequences: false)
            #expect(lines.suffix(2) == ["glassctl: \(which)", ""], "\(result.stderr)")
            #expect(lines.dropLast(2).allSatisfy { $0.hasPrefix("glassctl notify-agent: ") }, "\(result.stderr)")
        }
    }

    /// Unix time `minutes` from now, on a whole minute.
    static func fromNow(_ minutes: Int64) -> Int64 { Int64(Date().timeIntervalSince1970) / 60 * 60 + minutes * 60 }

    @Test("the desktop calendar's next event (EDS) reaches glassd; EDS's change sends the new one, its removal clears it; a disabled calendar and a cancelled event do not count")
    func calendar() async throws {
        try await NotifyWorld.with { world in
            try await world.withEDS { eds in
                let (start, end) = (Self.fromNow(60), Self.fromNow(75))
                let standup = EDSStandIn.event(uid: "s", summary: "Standup\\, daily", start: start, end: end)
                let review = EDSStandIn.event(uid: "r", summary: "Review", start: Self.fromNow(120), end: Self.fromNow(180))
                let cancelled = EDSStandIn.event(uid: "c", summary: "Off", start: Self.fromNow(30), end: Self.fromNow(40), extra: ["STATUS:CANCELLED"])
                let hidden = EDSStandIn.event(uid: "h", summary: "Hidden", start: Self.fromNow(10), end: Self.fromNow(20))
                try await eds.addSource("personal", events: [review, standup, cancelled])
                try await eds.addSource("off", keyFile: EDSStandIn.keyFile(enabled: false), events: [hidden])
                try await world.withGlassd {
                    try await world.withGlassdCalls { calls in
                        try await world.withAgent(Self.wait) { _ in
                            let first = try await nextEvent(calls, world: world)
                            #expect(first == GlassdBus.Manager1.CalendarEvent(summary: "Standup, daily", start: start, end: end, allDay: false))

                            let (movedStart, movedEnd) = (Self.fromNow(45), Self.fromNow(50))
                            let moved = EDSStandIn.event(uid: "s", summary: "Standup (moved)", start: movedStart, end: movedEnd)
                            try await eds.change("personal", events: [review, moved, cancelled], signal: "ObjectsModified", arguments: [moved])
                            let second = try await nextEvent(calls, world: world)
                            #expect(second == GlassdBus.Manager1.CalendarEvent(summary: "Standup (moved)", start: movedStart, end: movedEnd, allDay: false))

                            try await eds.change("personal", events: [], signal: "ObjectsRemoved", arguments: ["s", "r", "c"])
                            #expect(try await nextEvent(calls, world: world) == GlassdBus.Manager1.CalendarEvent(), "an empty one clears it")

                            // Asked for the lookahead from now, in EDS's own query language; the disabled calendar never opened.
                            let queries = try await eds.queries("personal")
                            #expect(queries.count == 3, "\(queries)")
                            #expect(queries.allSatisfy { $0.hasPrefix("(occur-in-time-range? (make-time \"") && $0.contains("Z\") (make-time \"") }, "\(queries)")
                            #expect(try await eds.queries("off").isEmpty)
                        }
                    }
                }
            }
        }
    }

    @Test("a calendar added to EDS later is read; glassd back on the bus is sent the event again")
    func calendarGlassdReturns() async throws {
        try await NotifyWorld.with { world in
            try await world.withEDS { eds in
                try await world.withGlassdCalls { calls in
                    try await world.withAgent(Self.wait) { _ in
                        let (start, end) = (Self.fromNow(30), Self.fromNow(90))
                        try await world.withGlassd {
                            // No calendar yet: none.
                            #expect(try await nextEvent(calls, world: world) == GlassdBus.Manager1.CalendarEvent())
                            try await eds.addSource(
                                "personal", events: [EDSStandIn.event(uid: "p", summary: "Planning", start: start, end: end)])
                            #expect(try await nextEvent(calls, world: world).summary == "Planning")
                        }
                        try await world.withGlassd {
                            let again = try await nextEvent(calls, world: world)
                            #expect(again == GlassdBus.Manager1.CalendarEvent(summary: "Planning", start: start, end: end, allDay: false))
                        }
                    }
                }
            }
        }
    }

    @Test("no EDS on the session bus: glassd is told there is no event, the log says why once, and notifications are forwarded as ever")
    func noCalendar() async throws {
        try await NotifyWorld.with { world in
            try await world.withDesktopDaemon {
                try await world.withGlassd {
                    try await world.withGlassdCalls { calls in
                        try await world.withAgent(Self.wait) { _ in
                            _ = try await world.notifySend(["-a", "Mail", "Hello"])
                            let both = try await nextCalls(2, calls, world: world) { _ in true }
                            #expect(Set(both.map(\.name)) == ["Notify", "SetNextEvent"], "\(both)")
                            #expect(both.first { $0.name == "SetNextEvent" }?.event == GlassdBus.Manager1.CalendarEvent())
                            #expect(both.first { $0.name == "Notify" }?.notification?.summary == "Hello")
                            #expect(world.read("agent.log").components(separatedBy: "no Evolution Data Server").count == 2, "\(world.read("agent.log"))")
                        }
                    }
                }
            }
        }
    }

    @Test("a bad rules file: a clear error naming the rule and key, and a failing exit before it listens")
    func badRules() async throws {
        try await NotifyWorld.with { world in
            try world.writeRules("[[rule]]\napp = \"Spammy\"\naction = \"block\"\n")
            let result = try await runCommand(
                Paths.glassctl, ["notify-agent", "--bus", "system"],
                environment: ["DBUS_SESSION_BUS_ADDRESS": world.session, "DBUS_SYSTEM_BUS_ADDRESS": world.system, "XDG_CONFIG_HOME": world.directory])
            #expect(result.status == 1)
            #expect(result.stderr == "glassctl: \(world.directory)/glassd/notify.toml: rule 1: action must be \"allow\" or \"deny\", not \"block\"\n")
        }
    }
}
