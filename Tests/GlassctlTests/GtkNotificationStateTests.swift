// SPDX-License-Identifier: GPL-2.0-or-later
import NotifyRules
import Testing

@testable import glassctl

/// The agent's state with org.gtk.Notifications' calls: ids of its own, known at once.
@Suite("notify-agent's state with org.gtk.Notifications", .timeLimit(.minutes(1)))
struct GtkNotificationStateTests {
    static let first = NotifyAgentState.gtkFirstID
    static func key(_ id: String, app: String = "org.gnome.Calendar") -> GtkKey { GtkKey(appID: app, id: id) }
    static func note(_ summary: String, app: String = "org.gnome.Calendar", urgency: Urgency = .normal) -> DesktopNotification {
        DesktopNotification(appName: app, summary: summary, urgency: urgency)
    }

    static func present(_ rules: NotifyRules = NotifyRules(), dryRun: Bool = false) -> NotifyAgentState {
        var state = NotifyAgentState(rules: rules, dryRun: dryRun)
        _ = state.handle(.glassdPresent(true))
        return state
    }

    @Test("sent at once with an id of the agent's (above the desktop's); the same app and id again replaces it (the same id); another pair has another")
    func replaces() {
        var state = Self.present()
        let a = Self.note("A"), a2 = Self.note("A again"), b = Self.note("B")
        #expect(state.handle(.gtkAdded(Self.key("x"), a, minuteOfDay: 0)) == [.send(.notify(a, desktopID: Self.first))])
        _ = state.handle(.sendFinished(.sent))
        #expect(state.handle(.gtkAdded(Self.key("x"), a2, minuteOfDay: 0)) == [.send(.notify(a2, desktopID: Self.first))])
        _ = state.handle(.sendFinished(.sent))
        // Same id, another app: another notification.
        #expect(state.handle(.gtkAdded(Self.key("x", app: "org.gnome.Maps"), b, minuteOfDay: 0)) == [.send(.notify(b, desktopID: Self.first + 1))])
    }

    @Test("RemoveNotification closes what glassd had; a second removal, or of one never added, is nothing; added again after, it has a new id")
    func removes() {
        var state = Self.present()
        let a = Self.note("A")
        _ = state.handle(.gtkAdded(Self.key("x"), a, minuteOfDay: 0))
        _ = state.handle(.sendFinished(.sent))
        #expect(state.handle(.gtkRemoved(Self.key("x"))) == [.send(.close(desktopID: Self.first))])
        _ = state.handle(.sendFinished(.sent))
        #expect(state.handle(.gtkRemoved(Self.key("x"))).isEmpty)
        #expect(state.handle(.gtkRemoved(Self.key("never"))).isEmpty)
        #expect(state.handle(.gtkAdded(Self.key("x"), a, minuteOfDay: 0)) == [.send(.notify(a, desktopID: Self.first + 1))])
    }

    @Test("in order with Notify calls: one behind a call waiting for the desktop's id waits too; removed meanwhile, it is never sent")
    func order() {
        var state = Self.present()
        let call = CallKey(sender: ":1.7", serial: 1), desktop = Self.note("D", app: "Mail")
        let a = Self.note("A"), b = Self.note("B")
        _ = state.handle(.notifyCall(call, desktop, minuteOfDay: 0))
        #expect(state.handle(.gtkAdded(Self.key("a"), a, minuteOfDay: 0)).isEmpty)
        #expect(state.handle(.gtkAdded(Self.key("b"), b, minuteOfDay: 0)).isEmpty)
        #expect(state.handle(.gtkRemoved(Self.key("a"))).isEmpty)
        #expect(state.handle(.desktopReply(call, desktopID: 4)) == [.send(.notify(desktop, desktopID: 4))])
        #expect(state.handle(.sendFinished(.sent)) == [.send(.notify(b, desktopID: Self.first + 1))])
        #expect(state.handle(.sendFinished(.sent)).isEmpty)
    }

    @Test("the rules apply: a deny rule by app id, min_urgency, quiet hours (urgent, as critical, passes them)")
    func rules() throws {
        let rules = try NotifyRules.parse(
            "min_urgency = \"normal\"\n[[rule]]\napp = \"org.example.spammy\"\naction = \"deny\"\n[quiet_hours]\nstart = \"22:00\"\nend = \"07:00\"\n")
        var state = Self.present(rules)
        #expect(state.handle(.gtkAdded(Self.key("1", app: "org.example.Spammy"), Self.note("Ad", app: "org.example.Spammy"), minuteOfDay: 600)).isEmpty)
        #expect(state.handle(.gtkAdded(Self.key("2"), Self.note("Low", urgency: .low), minuteOfDay: 600)).isEmpty)
        #expect(state.handle(.gtkAdded(Self.key("3"), Self.note("Night"), minuteOfDay: 23 * 60)).isEmpty)
        let urgent = Self.note("Alarm", urgency: .critical)
        #expect(Self.sendsOnly(state.handle(.gtkAdded(Self.key("4"), urgent, minuteOfDay: 23 * 60))) == [.notify(urgent, desktopID: Self.first + 3)])
        // What was held back is not closed on glassd either.
        _ = state.handle(.sendFinished(.sent))
        #expect(state.handle(.gtkRemoved(Self.key("1", app: "org.example.Spammy"))).isEmpty)
    }

    @Test("while glassd is away they wait; a new version of a waiting one takes its place; removed while waiting, neither it nor a close is sent")
    func away() {
        var state = NotifyAgentState(rules: NotifyRules(), dryRun: false)
        let a = Self.note("A"), a2 = Self.note("A again"), b = Self.note("B")
        _ = state.handle(.gtkAdded(Self.key("a"), a, minuteOfDay: 0))
        _ = state.handle(.gtkAdded(Self.key("b"), b, minuteOfDay: 0))
        _ = state.handle(.gtkAdded(Self.key("a"), a2, minuteOfDay: 0))
        #expect(state.queue == [.notify(a2, desktopID: Self.first), .notify(b, desktopID: Self.first + 1)])
        _ = state.handle(.gtkRemoved(Self.key("b")))
        #expect(state.queue == [.notify(a2, desktopID: Self.first)])
        #expect(Self.sendsOnly(state.handle(.glassdPresent(true))) == [.notify(a2, desktopID: Self.first)])
        #expect(state.handle(.sendFinished(.sent)).isEmpty)
    }

    @Test("--dry-run: reported with the agent's id and its verdict; the removal reported as a close")
    func dryRun() throws {
        var state = NotifyAgentState(rules: try NotifyRules.parse("min_urgency = \"normal\""), dryRun: true)
        let low = Self.note("Low", urgency: .low), normal = Self.note("Normal")
        #expect(
            state.handle(.gtkAdded(Self.key("l"), low, minuteOfDay: 0)) == [.report(low, desktopID: Self.first, verdict: .belowMinUrgency(.normal))])
        #expect(state.handle(.gtkAdded(Self.key("n"), normal, minuteOfDay: 0)) == [.report(normal, desktopID: Self.first + 1, verdict: .forward(rule: nil))])
        #expect(state.handle(.gtkRemoved(Self.key("l"))).isEmpty)
        #expect(state.handle(.gtkRemoved(Self.key("n"))) == [.reportClose(desktopID: Self.first + 1)])
    }

    @Test("the pairs remembered are bounded: past the limit the oldest is forgotten (added again, a new id), a pair used lately is kept")
    func bounded() {
        var state = NotifyAgentState(rules: NotifyRules(), dryRun: true)
        let limit = NotifyAgentState.rememberedLimit
        for n in 0..<limit { _ = state.handle(.gtkAdded(Self.key("\(n)"), Self.note("\(n)"), minuteOfDay: 0)) }
        // Pair 0 used again: now the newest.
        _ = state.handle(.gtkAdded(Self.key("0"), Self.note("0"), minuteOfDay: 0))
        _ = state.handle(.gtkAdded(Self.key("new"), Self.note("new"), minuteOfDay: 0))
        let again = Self.note("again")
        let id = UInt32(limit)
        #expect(state.handle(.gtkAdded(Self.key("0"), again, minuteOfDay: 0)) == [.report(again, desktopID: Self.first, verdict: .forward(rule: nil))])
        #expect(
            state.handle(.gtkAdded(Self.key("1"), again, minuteOfDay: 0)) == [.report(again, desktopID: Self.first + id + 1, verdict: .forward(rule: nil))])
    }

    static func sendsOnly(_ effects: [AgentEffect]) -> [Outgoing] {
        effects.compactMap { if case .send(let item) = $0 { item } else { nil } }
    }
}
