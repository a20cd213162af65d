// SPDX-License-Identifier: GPL-2.0-or-later
import GlassdAPI
import GlassdContract
import NotifyRules
import Testing

@testable import DBusKit
@testable import glassctl

/// How notify-agent reads what it overhears, and what it makes of it for glassd and --dry-run.
@Suite("notify-agent's reading of Notify calls", .timeLimit(.minutes(1)))
struct NotifyCallTests {
    static func arguments(
        app: String = "Mail", replaces: UInt32 = 0, summary: String = "New mail", body: String = "From Ann", hints: [String: DBusValue] = [:],
        expire: Int32 = -1
    ) -> [DBusValue] {
        [.string(app), .uint32(replaces), .string("mail-icon"), .string(summary), .string(body), .array(element: "s", []), .vardict(hints), .int32(expire)]
    }

    static func message(_ kind: MonitoredMessage.Kind, sender: String, destination: String, serial: UInt64 = 0, replySerial: UInt64 = 0,
                        interface: String = "", member: String = "", arguments: [DBusValue] = []) -> MonitoredMessage {
        MonitoredMessage(
            kind: kind, serial: serial, replySerial: replySerial, sender: sender, destination: destination, path: "/org/freedesktop/Notifications",
            interface: interface, member: member, errorName: kind == .error ? "org.freedesktop.DBus.Error.Failed" : "", arguments: arguments)
    }

    @Test("a Notify call's arguments: urgency and category from the hints (urgency as any integer type), the rest as sent")
    func reads() {
        let plain = DesktopNotification(notifyArguments: Self.arguments())
        #expect(plain == DesktopNotification(appName: "Mail", summary: "New mail", body: "From Ann"))
        let hinted = DesktopNotification(
            notifyArguments: Self.arguments(replaces: 4, hints: ["urgency": .byte(2), "category": .string("email.arrived")], expire: 5000))
        #expect(
            hinted
                == DesktopNotification(
                    appName: "Mail", summary: "New mail", body: "From Ann", urgency: .critical, category: "email.arrived", replacesID: 4,
                    expireTimeout: 5000))
        #expect(DesktopNotification(notifyArguments: Self.arguments(hints: ["urgency": .int32(0)]))?.urgency == .low)
        // Out of range or of no integer type: normal.
        #expect(DesktopNotification(notifyArguments: Self.arguments(hints: ["urgency": .byte(7)]))?.urgency == .normal)
        #expect(DesktopNotification(notifyArguments: Self.arguments(hints: ["urgency": .string("2")]))?.urgency == .normal)
        #expect(DesktopNotification(notifyArguments: Self.arguments(hints: ["category": .string("")]))?.category == nil)
    }

    @Test("arguments that are not Notify's are no notification")
    func rejects() {
        #expect(DesktopNotification(notifyArguments: []) == nil)
        #expect(DesktopNotification(notifyArguments: Array(Self.arguments().dropLast())) == nil)
        var wrong = Self.arguments()
        wrong[1] = .int32(3)
        #expect(DesktopNotification(notifyArguments: wrong) == nil)
    }

    @Test("for glassd: the desktop's id, urgency as a byte, expiry only when the sender gave one; an empty summary is the app's name; text cut to 4 KiB at a character")
    func fields() {
        let note = DesktopNotification(appName: "Mail", summary: "", body: "b", urgency: .low, category: "email", expireTimeout: 0)
        #expect(
            note.fields(desktopID: 3)
                == GlassdBus.Manager1.NotificationFields(appName: "Mail", summary: "Mail", body: "b", urgency: 0, category: "email", desktopID: 3))
        #expect(DesktopNotification(appName: "", summary: "").fields(desktopID: 0).summary == "Notification")
        #expect(DesktopNotification(appName: "A", summary: "S", expireTimeout: 1500).fields(desktopID: 0).expireMs == 1500)
        let long = DesktopNotification(appName: "A", summary: String(repeating: "s", count: 3000), body: String(repeating: "👍", count: 3000))
        let cut = long.fields(desktopID: 1)
        #expect(cut.summary?.utf8.count == 1024)
        let body = cut.body ?? ""
        #expect(body.allSatisfy { $0 == "👍" } && !body.isEmpty)
        #expect("A".utf8.count + 1024 + body.utf8.count <= DesktopNotification.textBudget)
        #expect(DesktopNotification.textBudget - ("A".utf8.count + 1024 + body.utf8.count) < 4)
    }

    @Test("what is overheard: a Notify call by its sender and serial, a reply by its destination and reply serial, a close by its id; nothing else")
    func events() {
        let call = Self.message(
            .methodCall, sender: ":1.5", destination: "org.freedesktop.Notifications", serial: 12, interface: "org.freedesktop.Notifications",
            member: "Notify", arguments: Self.arguments())
        guard case .notifyCall(let key, let note, _)? = NotifyAgentRun.event(call) else {
            Issue.record("no notifyCall")
            return
        }
        #expect(key == CallKey(sender: ":1.5", serial: 12))
        #expect(note.summary == "New mail")
        guard case .desktopReply(let replyKey, let id)? = NotifyAgentRun.event(
            Self.message(.methodReturn, sender: ":1.2", destination: ":1.5", replySerial: 12, arguments: [.uint32(6)]))
        else {
            Issue.record("no desktopReply")
            return
        }
        #expect(replyKey == key && id == 6)
        guard case .desktopReply(_, nil)? = NotifyAgentRun.event(Self.message(.error, sender: ":1.2", destination: ":1.5", replySerial: 12))
        else {
            Issue.record("an error is no refusal")
            return
        }
        guard case .desktopClosed(4)? = NotifyAgentRun.event(
            Self.message(.signal, sender: ":1.2", destination: "", interface: "org.freedesktop.Notifications", member: "NotificationClosed",
                         arguments: [.uint32(4), .uint32(2)]))
        else {
            Issue.record("no desktopClosed")
            return
        }
        // GetCapabilities' reply (not one id) and other calls or signals mean nothing.
        #expect(NotifyAgentRun.event(Self.message(.methodReturn, sender: ":1.2", destination: ":1.5", replySerial: 3, arguments: [.array(element: "s", [])])) == nil)
        #expect(NotifyAgentRun.event(Self.message(.methodCall, sender: ":1.5", destination: "x", interface: "org.freedesktop.Notifications", member: "GetCapabilities")) == nil)
        #expect(NotifyAgentRun.event(Self.message(.signal, sender: ":1.2", destination: "", interface: "org.freedesktop.Notifications", member: "ActionInvoked", arguments: [.uint32(4), .string("a")])) == nil)
    }

    @Test("the session bus: $DBUS_SESSION_BUS_ADDRESS, else $XDG_RUNTIME_DIR/bus")
    func sessionBus() {
        #expect(NotifyAgent.sessionBus(["DBUS_SESSION_BUS_ADDRESS": "unix:path=/x", "XDG_RUNTIME_DIR": "/run/user/7"]) == .session)
        #expect(NotifyAgent.sessionBus(["XDG_RUNTIME_DIR": "/run/user/7"]) == .address("unix:path=/run/user/7/bus"))
        #expect(NotifyAgent.sessionBus(["XDG_RUNTIME_DIR": "relative"]) == .session)
        #expect(NotifyAgent.sessionBus([:]) == .session)
    }

    @Test("--dry-run's lines: one per notification, quotes and line breaks escaped")
    func reportLines() {
        let note = DesktopNotification(appName: "Chat", summary: "Say \"hi\"\nnow", urgency: .critical, category: "im.received")
        #expect(
            NotifyReport(note, desktopID: 3, verdict: .forward(rule: nil)).text
                == #"send app="Chat" summary="Say \"hi\"\nnow" urgency=critical category="im.received" desktop_id=3"#)
        #expect(
            NotifyReport(note, desktopID: 3, verdict: .quietHours(QuietHours(start: 1320, end: 420))).text
                == #"skip app="Chat" summary="Say \"hi\"\nnow" urgency=critical category="im.received" desktop_id=3: blocked: quiet hours 22:00-07:00"#)
        #expect(NotifyReport(closing: 9).text == "close desktop_id=9")
    }
}
