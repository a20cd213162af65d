// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import DesktopCalendar
import Foundation
import NotifyRules

/// A Notify call on the session bus: its sender and serial, which the desktop's reply names.
struct CallKey: Hashable, Sendable {
    var sender: String
    var serial: UInt64
}

/// A GNotification as org.gtk.Notifications names it: the application's id and its own id for it.
struct GtkKey: Hashable, Sendable {
    var appID: String
    var id: String
}

/// What goes to glassd, in order.
enum Outgoing: Sendable, Equatable {
    case notify(DesktopNotification, desktopID: UInt32)
    case close(desktopID: UInt32)
}

/// How a call to glassd went.
enum SendOutcome: Sendable {
    case sent
    /// glassd was not there to answer (not on the bus, or it went during the call): kept, sent again when it is back.
    case glassdAway
    /// glassd refused it (its error): dropped.
    case refused(BusError)
}

/// What the agent reacts to, in one stream: one task owns all its state.
enum AgentEvent: Sendable {
    case notifyCall(CallKey, DesktopNotification, minuteOfDay: Int)
    /// The desktop's daemon answered a Notify call: its id of the notification, nil for an error.
    case desktopReply(CallKey, desktopID: UInt32?)
    case desktopClosed(desktopID: UInt32)
    /// org.gtk.Notifications.AddNotification: new, or a new version of the one of that key.
    case gtkAdded(GtkKey, DesktopNotification, minuteOfDay: Int)
    /// org.gtk.Notifications.RemoveNotification.
    case gtkRemoved(GtkKey)
    /// The desktop did not answer within the bound: forwarded without its id.
    case replyOverdue(CallKey)
    case glassdPresent(Bool)
    case sendFinished(SendOutcome)
    /// The desktop's calendar said something changed.
    case calendarChanged
    /// The calendar's timer (the event's end, or midnight) went off.
    case calendarTimer
    /// A read of the calendar: its next event (nil: none, or no calendar), when, and a line on
    /// how reading it went (nil: well).
    case calendarRead(NextEvent?, now: Date, note: String?)
    /// How a SetNextEvent call went.
    case eventSent(SendOutcome)
}

/// What the agent does in reply to an event.
enum AgentEffect: Sendable, Equatable {
    /// Raise `replyOverdue` for this call after the bound.
    case startReplyTimer(CallKey)
    case send(Outgoing)
    /// --dry-run: a notification and what would become of it (nil: sent).
    case report(DesktopNotification, desktopID: UInt32, verdict: Verdict)
    case reportClose(desktopID: UInt32)
    /// Ask the bus whether glassd is there (a call found it gone; it may be back already).
    case checkGlassd
    case log(String)
    /// Read the calendar's next event (then `calendarRead`).
    case readCalendar
    /// Raise `calendarTimer` at this time, instead of when it was to be raised before.
    case wakeCalendar(at: Date)
    /// SetNextEvent with this event (nil: clear it).
    case sendEvent(NextEvent?)
    /// --dry-run: the event that would be sent.
    case reportEvent(NextEvent?)
}

/// The notification agent's state: Notify calls waiting for the desktop's id, the queue for
/// glassd while it is away, what was forwarded (for closes); and the calendar's (`calendar`).
/// Pure: events in, effects out.
struct NotifyAgentState {
    /// How many notifications wait for glassd at most; the oldest goes first.
    static let queueLimit = 20
    /// How many delivered desktop ids are remembered (for closing them).
    static let rememberedLimit = 512
    /// The first id the agent gives org.gtk.Notifications' notifications (which come with none):
    /// far above the desktop daemon's own ids, which count up from 1.
    static let gtkFirstID: UInt32 = 0x8000_0000

    let rules: NotifyRules
    let dryRun: Bool

    private struct Waiting {
        /// nil: not a Notify call (org.gtk.Notifications: its id is known at once).
        var key: CallKey?
        var notification: DesktopNotification
        var verdict: Verdict
        /// Known: the desktop's id (0 if it did not say in time); nil: not yet.
        var desktopID: UInt32?
        /// The desktop refused it: it is not forwarded.
        var refused = false
    }

    /// In the order the calls were made: each is released once it and those before it are known.
    private var waiting: [Waiting] = []
    private(set) var queue: [Outgoing] = []
    private var inFlight: Outgoing?
    private(set) var glassdPresent = false
    /// Desktop ids glassd has had (for closing them), newest last.
    private var delivered: [UInt32] = []
    /// The ids given to org.gtk.Notifications' notifications, and their keys newest last (the
    /// oldest is forgotten past `rememberedLimit`).
    private var gtkIDs: [GtkKey: UInt32] = [:]
    private var gtkOrder: [GtkKey] = []
    private var nextGtkID = gtkFirstID
    private(set) var calendar: NextEventState

    init(rules: NotifyRules, dryRun: Bool, zone: TimeZone = .current) {
        self.rules = rules
        self.dryRun = dryRun
        calendar = NextEventState(dryRun: dryRun, zone: zone)
    }

    /// What the agent does first: read the calendar (unless notify.toml turned it off).
    mutating func start() -> [AgentEffect] {
        calendar.start(enabled: rules.calendar)
    }

    mutating func handle(_ event: AgentEvent) -> [AgentEffect] {
        var effects: [AgentEffect] = []
        switch event {
        case .calendarChanged, .calendarTimer, .calendarRead, .eventSent:
            return calendar.handle(event)
        case .notifyCall(let key, let notification, let minute):
            let verdict = rules.decide(notification, minuteOfDay: minute)
            // The same notification again: its id is the one it replaces, no need to wait.
            let known: UInt32? = notification.replacesID != 0 ? notification.replacesID : nil
            waiting.append(Waiting(key: key, notification: notification, verdict: verdict, desktopID: known))
            if known == nil { effects.append(.startReplyTimer(key)) }
        case .desktopReply(let key, let desktopID):
            guard let index = waiting.firstIndex(where: { $0.key == key && $0.desktopID == nil }) else { break }
            if let desktopID {
                waiting[index].desktopID = desktopID
            } else {
                waiting[index].desktopID = 0
                waiting[index].refused = true
            }
        case .replyOverdue(let key):
            guard let index = waiting.firstIndex(where: { $0.key == key && $0.desktopID == nil }) else { break }
            waiting[index].desktopID = 0
        case .desktopClosed(let desktopID):
            close(desktopID, &effects)
        case .gtkAdded(let key, let notification, let minute):
            let verdict = rules.decide(notification, minuteOfDay: minute)
            waiting.append(Waiting(key: nil, notification: notification, verdict: verdict, desktopID: gtkID(for: key)))
        case .gtkRemoved(let key):
            guard let desktopID = gtkIDs.removeValue(forKey: key) else { break }
            gtkOrder.removeAll { $0 == key }
            // Still behind a Notify call waiting for the desktop's id: it never goes.
            for index in waiting.indices where waiting[index].key == nil && waiting[index].desktopID == desktopID {
                waiting[index].refused = true
            }
            close(desktopID, &effects)
        case .glassdPresent(let present):
            if present && !glassdPresent && !queue.isEmpty {
                effects.append(.log("glassd is back: sending the \(queue.count) notification(s) that waited"))
            } else if !present && glassdPresent {
                effects.append(.log("glassd left the bus: notifications wait for it (at most \(Self.queueLimit))"))
            }
            glassdPresent = present
            effects += calendar.handle(event)
        case .sendFinished(let outcome):
            guard let sent = inFlight else { break }
            inFlight = nil
            switch outcome {
            case .sent:
                break
            case .glassdAway:
                queue.insert(sent, at: 0)
                trimQueue(&effects)
                if glassdPresent { effects.append(.log("glassd did not answer: notifications wait for it")) }
                glassdPresent = false
                effects.append(.checkGlassd)
            case .refused(let error):
                let hint = authorizationHint(error).map { " (\($0))" } ?? ""
                effects.append(.log("glassd refused a notification: \(error.name): \(error.message)\(hint)"))
            }
        }
        release(&effects)
        sendNext(&effects)
        return effects
    }

    /// The id of the org.gtk.Notifications notification of `key`: the one it had (a new version
    /// replaces it, as replaces_id does), else the next.
    private mutating func gtkID(for key: GtkKey) -> UInt32 {
        if let known = gtkIDs[key] {
            gtkOrder.removeAll { $0 == key }
            gtkOrder.append(key)
            return known
        }
        let id = nextGtkID
        nextGtkID = nextGtkID == .max ? Self.gtkFirstID : nextGtkID + 1
        gtkIDs[key] = id
        gtkOrder.append(key)
        if gtkOrder.count > Self.rememberedLimit { gtkIDs[gtkOrder.removeFirst()] = nil }
        return id
    }

    /// Forwards (or reports) the calls at the head whose ids are known.
    private mutating func release(_ effects: inout [AgentEffect]) {
        while let head = waiting.first, let desktopID = head.desktopID {
            waiting.removeFirst()
            if head.refused { continue }  // the desktop did not take it: nothing to show
            if dryRun {
                effects.append(.report(head.notification, desktopID: desktopID, verdict: head.verdict))
                if head.verdict.forwards { deliver(desktopID) }
                continue
            }
            guard head.verdict.forwards else { continue }
            enqueue(.notify(head.notification, desktopID: desktopID), &effects)
        }
    }

    private mutating func enqueue(_ item: Outgoing, _ effects: inout [AgentEffect]) {
        if case .notify(_, let desktopID) = item, desktopID != 0 {
            // A newer version of one still waiting takes its place.
            if let index = queue.firstIndex(where: { Self.desktopID(of: $0, notify: true) == desktopID }) {
                queue[index] = item
                return
            }
        }
        queue.append(item)
        trimQueue(&effects)
    }

    private mutating func trimQueue(_ effects: inout [AgentEffect]) {
        while queue.count > Self.queueLimit {
            queue.removeFirst()
            effects.append(.log("glassd is away and \(Self.queueLimit) notifications wait: dropped the oldest"))
        }
    }

    private mutating func close(_ desktopID: UInt32, _ effects: inout [AgentEffect]) {
        // A version still waiting for glassd goes unsent; glassd hears of the close only if it had one.
        queue.removeAll { Self.desktopID(of: $0, notify: true) == desktopID }
        guard let index = delivered.firstIndex(of: desktopID) else { return }
        delivered.remove(at: index)
        if dryRun {
            effects.append(.reportClose(desktopID: desktopID))
        } else {
            enqueue(.close(desktopID: desktopID), &effects)
        }
    }

    private mutating func sendNext(_ effects: inout [AgentEffect]) {
        guard glassdPresent, inFlight == nil, !queue.isEmpty else { return }
        let next = queue.removeFirst()
        inFlight = next
        if case .notify(_, let desktopID) = next { deliver(desktopID) }
        effects.append(.send(next))
    }

    /// glassd has (or is being sent) a version of `desktopID`, or --dry-run reported one.
    private mutating func deliver(_ desktopID: UInt32) {
        guard desktopID != 0 else { return }
        delivered.removeAll { $0 == desktopID }
        delivered.append(desktopID)
        if delivered.count > Self.rememberedLimit { delivered.removeFirst() }
    }

    private static func desktopID(of item: Outgoing, notify: Bool) -> UInt32? {
        switch item {
        case .notify(_, let desktopID): desktopID
        case .close(let desktopID): notify ? nil : desktopID
        }
    }
}
