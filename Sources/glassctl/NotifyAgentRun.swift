// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import DesktopCalendar
import Foundation
import GlassdAPI
import GlassdContract
import NotifyRules

/// The agent at work: overheard messages, the calendar's changes and glassd's comings and goings
/// in, calls to glassd (or --dry-run's lines) out, all through `NotifyAgentState` on one task.
struct NotifyAgentRun {
    let rules: NotifyRules
    let dryRun: Bool
    let json: Bool
    let glassd: Client?
    /// How long a Notify call waits for the desktop's reply (its id) before it is forwarded without one.
    let replyBound: Duration
    /// The desktop's calendar and the signals of its changes; nil when notify.toml turned it off.
    let calendar: EDSCalendar?
    let calendarChanges: SignalSubscription?

    /// An event for the state, or the end.
    private enum Input: Sendable {
        case event(AgentEvent)
        case connectionLost(String)
    }

    /// Runs until a bus connection is lost; returns which.
    func run(_ overheard: AsyncStream<MonitoredMessage>) async -> String {
        let (inputs, input) = AsyncStream.makeStream(of: Input.self)
        // The calendar's one timer: each time given replaces the one before.
        let (wakeTimes, wake) = AsyncStream.makeStream(of: Date.self, bufferingPolicy: .bufferingNewest(1))
        return await withDiscardingTaskGroup { group in
            group.addTask {
                for await message in overheard {
                    if let event = Self.event(message) { input.yield(.event(event)) }
                }
                input.yield(.connectionLost("the session bus connection was lost"))
            }
            if let glassd {
                group.addTask {
                    await Self.watchGlassd(glassd) { input.yield(.event($0)) }
                    input.yield(.connectionLost("the connection to glassd's bus was lost"))
                }
            }
            if let calendar, let calendarChanges {
                group.addTask {
                    await calendar.watch(calendarChanges) { input.yield(.event(.calendarChanged)) }
                    input.yield(.connectionLost("the session bus connection was lost"))
                }
                group.addTask { await Self.timer(wakeTimes) { input.yield(.event(.calendarTimer)) } }
            }
            var state = NotifyAgentState(rules: rules, dryRun: dryRun)
            for effect in state.start() {
                perform(effect, group: &group, wake: wake) { input.yield(.event($0)) }
            }
            var reason = "stopped"
            loop: for await item in inputs {
                switch item {
                case .connectionLost(let why):
                    reason = why
                    break loop
                case .event(let event):
                    for effect in state.handle(event) {
                        perform(effect, group: &group, wake: wake) { input.yield(.event($0)) }
                    }
                }
            }
            wake.finish()
            group.cancelAll()
            return reason
        }
    }

    private func perform(
        _ effect: AgentEffect, group: inout DiscardingTaskGroup, wake: AsyncStream<Date>.Continuation,
        _ input: @escaping @Sendable (AgentEvent) -> Void
    ) {
        switch effect {
        case .readCalendar:
            guard let calendar else { return }
            group.addTask {
                let now = Date()
                let (next, note) = await calendar.next(now: now)
                input(.calendarRead(next, now: now, note: note))
            }
        case .wakeCalendar(let date):
            wake.yield(date)
        case .sendEvent(let event):
            guard let glassd else { return }
            group.addTask { input(.eventSent(await Self.send(event, to: glassd))) }
        case .reportEvent(let event):
            printLine(EventReport(event))
        case .startReplyTimer(let key):
            group.addTask {
                // One bounded wait per call (cancelled with the agent), not a polling loop.
                guard (try? await Task.sleep(for: replyBound)) != nil else { return }
                input(.replyOverdue(key))
            }
        case .send(let item):
            guard let glassd else { return }
            group.addTask { input(.sendFinished(await Self.send(item, to: glassd))) }
        case .checkGlassd:
            guard let glassd else { return }
            group.addTask {
                if let present = await Self.hasOwner(glassd) { input(.glassdPresent(present)) }
            }
        case .report(let notification, let desktopID, let verdict):
            printLine(NotifyReport(notification, desktopID: desktopID, verdict: verdict))
        case .reportClose(let desktopID):
            printLine(NotifyReport(closing: desktopID))
        case .log(let text):
            FileHandle.standardError.write(Data("glassctl notify-agent: \(text)\n".utf8))
        }
    }

    private func printLine(_ report: some DryRunLine) {
        if json {
            try? printJSON(report)
        } else {
            print(report.text)
        }
        fflush(nil)
    }

    /// What an overheard message means to the agent, if anything.
    static func event(_ message: MonitoredMessage) -> AgentEvent? {
        switch message.kind {
        case .methodCall where message.interface == DesktopBus.interface && message.member == "Notify":
            guard let notification = DesktopNotification(notifyArguments: message.arguments) else { return nil }
            return .notifyCall(CallKey(sender: message.sender, serial: message.serial), notification, minuteOfDay: minuteOfDay())
        case .methodCall where message.interface == GtkNotificationsBus.interface && message.member == "AddNotification":
            guard let (key, notification) = GtkNotificationsBus.added(message.arguments) else { return nil }
            return .gtkAdded(key, notification, minuteOfDay: minuteOfDay())
        case .methodCall where message.interface == GtkNotificationsBus.interface && message.member == "RemoveNotification":
            return GtkNotificationsBus.removed(message.arguments).map { .gtkRemoved($0) }
        case .methodReturn, .error:
            // A reply goes to the caller's unique name, answering the call's serial.
            let key = CallKey(sender: message.destination, serial: message.replySerial)
            guard message.kind == .methodReturn else { return .desktopReply(key, desktopID: nil) }
            guard message.arguments.count == 1, case .uint32(let id) = message.arguments[0] else { return nil }
            return .desktopReply(key, desktopID: id)
        case .signal where message.interface == DesktopBus.interface && message.member == "NotificationClosed":
            guard let id = message.arguments.first?.uint32 else { return nil }
            return .desktopClosed(desktopID: id)
        default:
            return nil
        }
    }

    /// Now, in local time, as minutes after midnight (what quiet hours are in).
    static func minuteOfDay(_ date: Date = Date()) -> Int {
        let parts = Calendar.current.dateComponents([.hour, .minute], from: date)
        return (parts.hour ?? 0) * 60 + (parts.minute ?? 0)
    }

    /// Whether glassd is on its bus, then every change, until the connection is lost.
    static func watchGlassd(_ glassd: Client, _ input: @Sendable (AgentEvent) -> Void) async {
        guard
            let owners = try? await glassd.connection.subscribe(
                SignalMatch(sender: "org.freedesktop.DBus", interface: "org.freedesktop.DBus", member: "NameOwnerChanged"))
        else { return }
        // After the match is in place: no change between the two is missed.
        if let present = await hasOwner(glassd) { input(.glassdPresent(present)) }
        for await event in owners {
            switch event {
            case .signal(let signal):
                guard signal.arguments.first?.string == GlassdBus.name, signal.arguments.count == 3 else { continue }
                input(.glassdPresent(signal.arguments[2].string?.isEmpty == false))
            case .overflowed:
                if let present = await hasOwner(glassd) { input(.glassdPresent(present)) }
            }
        }
    }

    static func hasOwner(_ glassd: Client) async -> Bool? {
        let reply = try? await glassd.connection.call(
            "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: "NameHasOwner",
            [.string(GlassdBus.name)])
        return reply?.first?.bool
    }

    /// Errors that mean glassd was not there to answer, rather than that it refused.
    static let awayErrors: Set = [
        "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner",
        "org.freedesktop.DBus.Error.NoReply", "org.freedesktop.DBus.Error.Disconnected",
        "org.freedesktop.DBus.Error.Timeout", "org.freedesktop.DBus.Error.TimedOut",
    ]

    static func send(_ item: Outgoing, to glassd: Client) async -> SendOutcome {
        await outcome {
            switch item {
            case .notify(let notification, let desktopID):
                _ = try await glassd.manager.notify(notification: notification.fields(desktopID: desktopID), timeoutSeconds: 10)
            case .close(let desktopID):
                try await glassd.manager.closeNotification(desktopID: desktopID, timeoutSeconds: 10)
            }
        }
    }

    /// SetNextEvent: the event, or an empty one (no summary) to clear it.
    static func send(_ event: NextEvent?, to glassd: Client) async -> SendOutcome {
        await outcome {
            try await glassd.manager.setNextEvent(event: event?.busEvent ?? GlassdBus.Manager1.CalendarEvent(), timeoutSeconds: 10)
        }
    }

    private static func outcome(_ call: () async throws -> Void) async -> SendOutcome {
        do {
            try await call()
            return .sent
        } catch let error as BusError {
            return awayErrors.contains(error.name) ? .glassdAway : .refused(error)
        } catch {
            return .glassdAway
        }
    }

    /// One timer for the whole run: it goes off at the latest time `times` gave, unless a newer
    /// time came first (then that one counts). Ends when `times` does.
    static func timer(_ times: AsyncStream<Date>, fire: @escaping @Sendable () -> Void) async {
        var iterator = times.makeAsyncIterator()
        var next = await iterator.next()
        while let time = next {
            next = await withDiscardingTaskGroup(returning: Date?.self) { group in
                group.addTask {
                    guard (try? await Task.sleep(for: .seconds(max(0, time.timeIntervalSinceNow)))) != nil else { return }
                    fire()
                }
                let newer = await iterator.next()
                group.cancelAll()
                return newer
            }
        }
    }
}
