// SPDX-License-Identifier: GPL-2.0-or-later
import GlassdContract
import NotifyRules
import Testing

@testable import DBusKit
@testable import glassctl

/// GNOME's org.gtk.Notifications (GNotification, the portal): how the agent reads its calls, and
/// the ids it gives them.
@Suite("notify-agent and org.gtk.Notifications", .timeLimit(.minutes(1)))
struct GtkNotificationTests {
    static func added(
        app: String = "org.gnome.Calendar", id: String = "ev1", _ fields: [String: DBusValue] = ["title": .string("Standup")]
    ) -> [DBusValue] {
        [.string(app), .string(id), .vardict(fields)]
    }

    static func call(_ member: String, _ arguments: [DBusValue], interface: String = "org.gtk.Notifications") -> MonitoredMessage {
        MonitoredMessage(
            kind: .methodCall, serial: 9, replySerial: 0, sender: ":1.5", destination: "org.gtk.Notifications", path: "/org/gtk/Notifications",
            interface: interface, member: member, errorName: "", arguments: arguments)
    }

    @Test("AddNotification: the app id as the app, title as summary, body, category; priority low/normal/high/urgent as low/normal/normal/critical")
    func reads() throws {
        let (key, note) = try #require(
            GtkNotificationsBus.added(
                Self.added([
                    "title": .string("Standup"), "body": .string("In 5 minutes"), "priority": .string("urgent"), "category": .string("im.received"),
                    "icon": .string("x"), "default-action": .string("app.open"),
                ])))
        #expect(key == GtkKey(appID: "org.gnome.Calendar", id: "ev1"))
        #expect(
            note
                == DesktopNotification(
                    appName: "org.gnome.Calendar", summary: "Standup", body: "In 5 minutes", urgency: .critical, category: "im.received"))
        let urgencies = ["low", "normal", "high", "urgent", "bogus"].map {
            GtkNotificationsBus.added(Self.added(["priority": .string($0)]))?.1.urgency
        }
        #expect(urgencies == [.low, .normal, .normal, .critical, .normal])
        // No priority, no title: normal, an empty summary (glassd's fields then use the app).
        let bare = try #require(GtkNotificationsBus.added(Self.added([:])))
        #expect(bare.1.urgency == .normal && bare.1.summary == "" && bare.1.category == nil)
        #expect(bare.1.fields(desktopID: 1).summary == "org.gnome.Calendar")
        // A field of the wrong type is as if absent.
        #expect(GtkNotificationsBus.added(Self.added(["title": .uint32(3)]))?.1.summary == "")
    }

    @Test("arguments that are not AddNotification's or RemoveNotification's are nothing")
    func rejects() {
        #expect(GtkNotificationsBus.added([]) == nil)
        #expect(GtkNotificationsBus.added([.string("a"), .string("b")]) == nil)
        #expect(GtkNotificationsBus.added([.string("a"), .uint32(1), .vardict([:])]) == nil)
        #expect(GtkNotificationsBus.added([.string("a"), .string("b"), .string("c")]) == nil)
        #expect(GtkNotificationsBus.removed([.string("a")]) == nil)
        #expect(GtkNotificationsBus.removed([.string("a"), .string("b")]) == GtkKey(appID: "a", id: "b"))
    }

    @Test("what is overheard: AddNotification and RemoveNotification on org.gtk.Notifications; the same names on another interface are nothing")
    func events() {
        guard case .gtkAdded(let key, let note, _)? = NotifyAgentRun.event(Self.call("AddNotification", Self.added())) else {
            Issue.record("no gtkAdded")
            return
        }
        #expect(key == GtkKey(appID: "org.gnome.Calendar", id: "ev1") && note.summary == "Standup")
        guard case .gtkRemoved(let removed)? = NotifyAgentRun.event(Self.call("RemoveNotification", [.string("org.gnome.Calendar"), .string("ev1")]))
        else {
            Issue.record("no gtkRemoved")
            return
        }
        #expect(removed == key)
        #expect(NotifyAgentRun.event(Self.call("AddNotification", Self.added(), interface: "org.example.Other")) == nil)
        #expect(NotifyAgentRun.event(Self.call("AddNotification", [])) == nil)
    }

    @Test("the monitor listens for both calls on gnome-shell's object")
    func monitorRules() {
        #expect(
            GtkNotificationsBus.monitorRules == [
                "type='method_call',path='/org/gtk/Notifications',interface='org.gtk.Notifications',member='AddNotification'",
                "type='method_call',path='/org/gtk/Notifications',interface='org.gtk.Notifications',member='RemoveNotification'",
            ])
    }
}
