// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import NotifyRules
import Testing

@testable import glassctl

/// The notification agent's state, event by event: what it sends, when, and what it keeps.
@Suite("notify-agent's state", .timeLimit(.minutes(1)))
struct NotifyAgentStateTests {
    static func key(_ serial: UInt64, _ sender: String = ":1.7") -> CallKey { CallKey(sender: sender, serial: serial) }
    static func note(_ summary: String, app: String = "App", urgency: Urgency = .normal, replaces: UInt32 = 0) -> DesktopNotification {
        DesktopNotification(appName: app, summary: summary, urgency: urgency, replacesID: replaces)
    }

    /// A state with glassd present.
    static func present(_ rules: NotifyRules = NotifyRules(), dryRun: Bool = false) -> NotifyAgentState {
        var state = NotifyAgentState(rules: rules, dryRun: dryRun)
        #expect(state.handle(.glassdPresent(true)).isEmpty)
        return state
    }

    static func sends(_ effects: [AgentEffect]) -> [Outgoing] {
        effects.compactMap { if case .send(let item) = $0 { item } else { nil } }
    }

    @Test("a call waits for the desktop's id; one sent after it, already known (a replacement), waits behind it; one call to glassd at a time")
    func order() {
        var state = Self.present()
        let a = Self.note("A"), b = Self.note("B", replaces: 5)
        #expect(state.handle(.notifyCall(Self.key(1), a, minuteOfDay: 0)) == [.startReplyTimer(Self.key(1))])
        #expect(state.handle(.notifyCall(Self.key(2), b, minuteOfDay: 0)).isEmpty)
        // A reply for another sender's call of the same serial is not A's.
        #expect(state.handle(.desktopReply(Self.key(1, ":1.8"), desktopID: 9)).isEmpty)
        #expect(state.handle(.desktopReply(Self.key(1), desktopID: 4)) == [.send(.notify(a, desktopID: 4))])
        #expect(state.handle(.sendFinished(.sent)) == [.send(.notify(b, desktopID: 5))])
        #expect(state.handle(.sendFinished(.sent)).isEmpty)
        #expect(state.queue.isEmpty)
    }

    @Test("no answer from the desktop in time: forwarded with desktop id 0; a late answer changes nothing")
    func overdue() {
        var state = Self.present()
        let a = Self.note("A")
        _ = state.handle(.notifyCall(Self.key(1), a, minuteOfDay: 0))
        #expect(state.handle(.replyOverdue(Self.key(1))) == [.send(.notify(a, desktopID: 0))])
        #expect(state.handle(.desktopReply(Self.key(1), desktopID: 4)).isEmpty)
    }

    @Test("the desktop refused the call (an error reply): nothing is forwarded")
    func desktopRefused() {
        var state = Self.present()
        _ = state.handle(.notifyCall(Self.key(1), Self.note("A"), minuteOfDay: 0))
        #expect(state.handle(.desktopReply(Self.key(1), desktopID: nil)).isEmpty)
        #expect(state.queue.isEmpty)
    }

    @Test("what the rules block is not sent, and its close is not either")
    func blocked() throws {
        var state = Self.present(try NotifyRules.parse("[[rule]]\napp = \"Spammy\"\naction = \"deny\""))
        _ = state.handle(.notifyCall(Self.key(1), Self.note("A", app: "spammy"), minuteOfDay: 0))
        #expect(state.handle(.desktopReply(Self.key(1), desktopID: 3)).isEmpty)
        #expect(state.handle(.desktopClosed(desktopID: 3)).isEmpty)
    }

    @Test("glassd gone during a call: the notification goes back to the head of the queue, the agent asks the bus, and sends it again once glassd is back")
    func awayDuringCall() {
        var state = Self.present()
        let a = Self.note("A", replaces: 1), b = Self.note("B", replaces: 2)
        #expect(Self.sends(state.handle(.notifyCall(Self.key(1), a, minuteOfDay: 0))) == [.notify(a, desktopID: 1)])
        #expect(state.handle(.notifyCall(Self.key(2), b, minuteOfDay: 0)).isEmpty)
        let away = state.handle(.sendFinished(.glassdAway))
        #expect(away.contains(.checkGlassd))
        #expect(Self.sends(away).isEmpty)
        #expect(!state.glassdPresent)
        #expect(state.queue == [.notify(a, desktopID: 1), .notify(b, desktopID: 2)])
        #expect(Self.sends(state.handle(.glassdPresent(false))).isEmpty)
        #expect(Self.sends(state.handle(.glassdPresent(true))) == [.notify(a, desktopID: 1)])
        #expect(state.handle(.sendFinished(.sent)) == [.send(.notify(b, desktopID: 2))])
    }

    @Test("glassd refuses one: it is dropped with a log line naming the error, and the next goes")
    func refused() {
        var state = Self.present()
        let a = Self.note("A", replaces: 1), b = Self.note("B", replaces: 2)
        _ = state.handle(.notifyCall(Self.key(1), a, minuteOfDay: 0))
        _ = state.handle(.notifyCall(Self.key(2), b, minuteOfDay: 0))
        let effects = state.handle(.sendFinished(.refused(.invalidArgs("more than 4 KiB of text"))))
        #expect(Self.sends(effects) == [.notify(b, desktopID: 2)])
        #expect(effects.contains(.log("glassd refused a notification: org.freedesktop.DBus.Error.InvalidArgs: more than 4 KiB of text")))
    }

    @Test("while glassd is away at most 20 wait: the oldest goes, with a log line; a newer version of a waiting one takes its place")
    func boundedQueue() {
        var state = NotifyAgentState(rules: NotifyRules(), dryRun: false)
        for n in 1...20 { #expect(state.handle(.notifyCall(Self.key(UInt64(n)), Self.note("\(n)", replaces: UInt32(n)), minuteOfDay: 0)).isEmpty) }
        let update = Self.note("3 again", replaces: 3)
        #expect(state.handle(.notifyCall(Self.key(21), update, minuteOfDay: 0)).isEmpty)
        #expect(state.queue.count == 20)
        #expect(state.queue[2] == .notify(update, desktopID: 3))
        let over = state.handle(.notifyCall(Self.key(22), Self.note("21", replaces: 21), minuteOfDay: 0))
        #expect(over == [.log("glassd is away and 20 notifications wait: dropped the oldest")])
        #expect(state.queue.first == .notify(Self.note("2", replaces: 2), desktopID: 2))
        #expect(state.queue.last == .notify(Self.note("21", replaces: 21), desktopID: 21))
    }

    @Test("the desktop closes one: one glassd had is closed there; one still waiting for glassd is simply not sent; one never seen is nothing")
    func closes() {
        var state = NotifyAgentState(rules: NotifyRules(), dryRun: false)
        _ = state.handle(.glassdPresent(true))
        let a = Self.note("A", replaces: 1)
        _ = state.handle(.notifyCall(Self.key(1), a, minuteOfDay: 0))
        _ = state.handle(.sendFinished(.sent))
        #expect(state.handle(.desktopClosed(desktopID: 1)) == [.send(.close(desktopID: 1))])
        _ = state.handle(.sendFinished(.sent))
        // Closed once: a second close is nothing.
        #expect(state.handle(.desktopClosed(desktopID: 1)).isEmpty)
        #expect(state.handle(.desktopClosed(desktopID: 77)).isEmpty)

        _ = state.handle(.glassdPresent(false))
        _ = state.handle(.notifyCall(Self.key(2), Self.note("B", replaces: 2), minuteOfDay: 0))
        #expect(state.queue.count == 1)
        #expect(state.handle(.desktopClosed(desktopID: 2)).isEmpty)
        #expect(state.queue.isEmpty)
    }

    @Test("--dry-run: a report per notification, with its verdict and the desktop's id; closes reported for what it would have sent; nothing sent")
    func dryRun() throws {
        var state = NotifyAgentState(rules: try NotifyRules.parse("min_urgency = \"normal\""), dryRun: true)
        let low = Self.note("Low", urgency: .low), normal = Self.note("Normal")
        _ = state.handle(.notifyCall(Self.key(1), low, minuteOfDay: 0))
        _ = state.handle(.notifyCall(Self.key(2), normal, minuteOfDay: 0))
        #expect(state.handle(.desktopReply(Self.key(2), desktopID: 8)).isEmpty)
        #expect(
            state.handle(.desktopReply(Self.key(1), desktopID: 7)) == [
                .report(low, desktopID: 7, verdict: .belowMinUrgency(.normal)), .report(normal, desktopID: 8, verdict: .forward(rule: nil)),
            ])
        #expect(state.handle(.desktopClosed(desktopID: 7)).isEmpty)
        #expect(state.handle(.desktopClosed(desktopID: 8)) == [.reportClose(desktopID: 8)])
        #expect(state.queue.isEmpty)
    }
}
