// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import Foundation
import GlassdAPI
import GlassdContract
import Testing

private let worldReady = BLEWorld.available || ProcessInfo.processInfo.environment["GLASSD_REQUIRE_BLE"] != nil
private let frame = 3

/// Desktop notifications and the glance on a virtual Frame, through glassd's display desk.
@Suite("Notifications on the glasses", .timeLimit(.minutes(10)), .serialized, .enabled(if: worldReady, "the Python BLE world is not set up"))
struct NotificationTests {
    /// Manager1.Notify with these entries (all strings but urgency, a byte); glassd's id.
    static func notify(_ world: World, _ fields: [String: String], urgency: UInt8 = 1) async throws -> UInt32 {
        var arguments = ["\(fields.count + 1)", "urgency", "y", "\(urgency)"]
        for (key, value) in fields.sorted(by: { $0.key < $1.key }) { arguments += [key, "s", value] }
        let result = try await world.callManager(GlassdBus.Method.notify, "a{sv}", arguments)
        guard result.ok, let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any],
            let id = (object["data"] as? [Any])?.first as? Int
        else { throw TestFailure("Notify failed: \(result.stderr)") }
        return UInt32(id)
    }

    /// DisplayQueue as (id, what, showing).
    static func queue(_ world: World) async throws -> [(String, String, Bool)] {
        let result = try await world.busctl([
            "--json=short", "get-property", GlassdBus.name, GlassdBus.managerPath, GlassdBus.managerInterface,
            GlassdBus.Property.displayQueue,
        ])
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        return (object?["data"] as? [[Any]] ?? []).compactMap { entry in
            guard entry.count == 3, let id = entry[0] as? String, let what = entry[1] as? String, let showing = entry[2] as? Bool
            else { return nil }
            return (id, what, showing)
        }
    }

    @Test("a notification shows on idle glasses; one that comes while an answer streams waits for it and its reading time; glassctl lists and dismisses them; the glance counts what is unread")
    func notificationsAndGlance() async throws {
        try await BLEWorld.with { ble in
            try await ble.withFrameSession(frame) { bus, vf in
                try await ble.pairReady(frame, bus)
                let world = ble.world
                let first = try await Self.notify(world, ["app_name": "Mail", "summary": "Lunch?", "body": "<b>noon</b> &amp; after"])
                // The body, its markup as text, after the heading.
                let shown = try await vf.waitForDisplay(containing: "noon")
                #expect(shown.contains("noon & after") && VirtualFrame.shows(shown, "Mail: Lunch?"), "the markup as its text: \(shown)")

                // A typed question whose answer streams for about 1.5 s ([slow]), shown on the glasses.
                async let answer = world.callManager(GlassdBus.Method.query, "s", ["[slow] what now"], timeout: 60)
                try await vf.waitForDisplay(containing: "echo")
                let later = try await Self.notify(world, ["app_name": "Build", "summary": "Tests passed"])
                let queue = try await Self.queue(world)
                #expect(queue.first.map { $0.1 == "answer" && $0.2 } == true, "the answer holds the display: \(queue)")
                #expect(queue.contains { $0.0 == "notification/\(later)" && !$0.2 }, "\(queue)")
                #expect(try await answer.ok)
                let text = try await vf.waitForDisplay(containing: "Build: Tests passed", timeout: .seconds(60))
                #expect(!text.contains("echo"), "the notification replaced the answer once it was read: \(text)")

                let listed = try await world.glassctl(["notifications", "--json"])
                let entries = try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]] ?? []
                #expect(entries.map { $0["id"] as? Int } == [Int(later), Int(first)], "newest first: \(listed.stdout)")
                #expect(entries.allSatisfy { $0["state"] as? String == "shown" }, "\(entries)")

                let glance = try await world.glassctl(["glance"])
                #expect(glance.ok && glance.stdout.contains("2 unread: Tests passed"), "\(glance.stdout) \(glance.stderr)")
                try await vf.waitForDisplay(containing: "2 unread", timeout: .seconds(30))

                #expect(try await world.glassctl(["notifications", "--dismiss", "\(first)"]).ok)
                let missing = try await world.glassctl(["notifications", "--dismiss", "9999"])
                #expect(!missing.ok && missing.stderr.contains("9999"), "\(missing.stderr)")
                let states = try await world.glassctl(["notifications", "--json"])
                let after = try JSONSerialization.jsonObject(with: Data(states.stdout.utf8)) as? [[String: Any]] ?? []
                #expect(after.last?["state"] as? String == "dismissed", "\(after)")

                let refused = try await world.callManager(GlassdBus.Method.notify, "a{sv}", ["1", "body", "s", "no summary"])
                #expect(!refused.ok && refused.stderr.contains("no summary"), "\(refused.stderr)")
            }
        }
    }

    @Test("the desktop's notifications reach the glasses: notify-send, the desktop's daemon, glassctl notify-agent, glassd, the Frame; a burst of 20 in about a second queues, not flickers")
    func fromTheDesktop() async throws {
        try await BLEWorld.with { ble in
            try await ble.withFrameSession(frame) { bus, vf in
                try await ble.pairReady(frame, bus)
                let queued = try await bus.signals(
                    SignalMatch(path: GlassdBus.managerPath, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"))
                try await NotifyWorld.with(glassdBus: ble.world.busAddress) { desktop in
                    try await desktop.withDesktopDaemon {
                        try await desktop.withAgent(["--reply-wait-ms", "20000"]) { _ in
                            let frames = try await vf.frames(until: "Room 2") {
                                _ = try await desktop.notifySend(["-a", "Calendar", "Standup in 5 minutes", "Room <i>2</i>"])
                            }
                            // The body, its markup as text, after the heading, and drawn with it: never the
                            // heading alone (seen on a loaded machine before the app held a heading for its text).
                            #expect(frames.last?.contains("Calendar: Standup in 5") == true, "\(frames)")
                            #expect(!frames.contains { $0.contains("Calendar: Standup") && !VirtualFrame.shows($0, "Room 2") }, "\(frames)")
                            let burst = ContinuousClock.now
                            for n in 1...20 { _ = try await desktop.notifySend(["-a", "Chat", "message \(n)"]) }
                            // All 20 reach glassd (ids 2...21) while the display shows one at a time.
                            try await within(.seconds(60), failure: { "the burst did not all reach glassd" }) {
                                for await signal in queued {
                                    let queue = signal.arguments.dropFirst().first?.stringKeyed?[GlassdBus.Property.displayQueue]
                                    if (queue?.elements ?? []).contains(where: { $0.elements?.first?.string == "notification/21" }) { return }
                                }
                            }
                            let took = ContinuousClock.now - burst
                            let stats = try await ble.world.busctl([
                                "--json=short", "get-property", GlassdBus.name, GlassdBus.managerPath, GlassdBus.managerInterface,
                                GlassdBus.Property.displayStats,
                            ])
                            let shownCount = (try JSONSerialization.jsonObject(with: Data(stats.stdout.utf8)) as? [String: Any])
                                .flatMap { ($0["data"] as? [String: Any])?["shown"] as? [String: Any] }?["data"] as? Int
                            // Each stays at least 3 s (its least reading time): one shown per 3 s of the burst at
                            // most, besides the first (about 4 in all on an idle machine, more when sending is slow).
                            let most = 2 + Int(took / .seconds(3))
                            #expect((1...min(most, 19)).contains(shownCount ?? 0), "shown \(shownCount ?? -1) in \(took): \(stats.stdout)")
                            let listed = try await ble.world.glassctl(["notifications", "--limit", "0", "--json"])
                            let entries = try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]] ?? []
                            #expect(entries.count == 21, "\(listed.stdout)")
                            #expect(entries.first?["summary"] as? String == "message 20")
                            try await vf.waitForDisplay(containing: "Chat: message 1", timeout: .seconds(60))
                        }
                    }
                }
            }
        }
    }

    /// The glance's line for an event starting at `start` (unix seconds), seen at `now`: "Next: HH:MM summary"
    /// in local time, "tomorrow" before it when it starts after midnight.
    static func nextLine(_ summary: String, start: Int64, now: Date) -> String {
        let date = Date(timeIntervalSince1970: TimeInterval(start))
        let parts = Calendar.current.dateComponents([.hour, .minute], from: date)
        let day = Calendar.current.isDate(date, inSameDayAs: now) ? "" : "tomorrow "
        return "Next: " + day + String(format: "%02d:%02d", parts.hour ?? 0, parts.minute ?? 0) + " " + summary
    }

    @Test("the glance has the desktop calendar's next event (SetNextEvent): in Glance's text and on the Frame; one that ends before it starts is refused (InvalidArgs) and changes nothing; one already over is left out")
    func calendarLine() async throws {
        try await BLEWorld.with { ble in
            try await ble.withFrameSession(frame) { bus, vf in
                try await ble.pairReady(frame, bus)
                let manager = DisplayDeskView(bus: bus).manager
                let now = Date()
                let unix = Int64(now.timeIntervalSince1970)
                try await manager.setNextEvent(event: .init(summary: "Standup", start: unix + 3600, end: unix + 5400, allDay: false))
                let line = Self.nextLine("Standup", start: unix + 3600, now: now)
                let glance = try await ble.world.glassctl(["glance"])
                #expect(glance.ok && glance.stdout.contains(line), "\(line): \(glance.stdout) \(glance.stderr)")
                try await vf.waitForDisplay(containing: line)

                do {
                    try await manager.setNextEvent(event: .init(summary: "Backwards", start: unix + 3600, end: unix))
                    Issue.record("an event that ends before it starts was taken")
                } catch let error as BusError {
                    #expect(error.name == "org.freedesktop.DBus.Error.InvalidArgs", "\(error)")
                }
                #expect(try await manager.glance().contains(line), "the refused event changed nothing")

                try await manager.setNextEvent(event: .init(summary: "Retro", start: unix - 7200, end: unix - 3600))
                let over = try await manager.glance()
                #expect(!over.contains("Next:") && !over.contains("Retro"), "\(over)")
            }
        }
    }

    @Test("on a virtual Monocle: a notification's heading and body are drawn as one; the same glance, with the calendar's next event")
    func calendarLineOnMonocle() async throws {
        let monocle = 2
        try await BLEWorld.with { ble in
            try await ble.withSession(monocle) { bus, vm in
                try await ble.pairReady(monocle, bus)
                let frames = try await vm.frames(until: "at noon") {
                    _ = try await Self.notify(ble.world, ["app_name": "Mail", "summary": "Lunch?", "body": "at noon"])
                }
                #expect(frames.last.map { VirtualMonocle.shows($0, "Mail: Lunch?") } == true, "\(frames)")
                #expect(!frames.contains { VirtualMonocle.shows($0, "Mail: Lunch?") && !VirtualMonocle.shows($0, "at noon") }, "\(frames)")
                let now = Date()
                let unix = Int64(now.timeIntervalSince1970)
                try await DisplayDeskView(bus: bus).manager.setNextEvent(event: .init(summary: "Standup", start: unix + 3600))
                let line = Self.nextLine("Standup", start: unix + 3600, now: now)
                let glance = try await ble.world.glassctl(["glance"])
                #expect(glance.ok && glance.stdout.contains(line), "\(line): \(glance.stdout) \(glance.stderr)")
                try await vm.waitForDisplay(containing: line)
            }
        }
    }
}
