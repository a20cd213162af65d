// SPDX-License-Identifier: GPL-2.0-or-later
import ArgumentParser
import CSystemd
import DBusKit
import Foundation
import GlassdAPI
import GlassdContract
import NotifyRules

struct NotifyAgent: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "notify-agent",
        abstract: "Forward the desktop's notifications to glassd, until stopped (a user service: glassd-notify-agent.service).",
        discussion: """
            Listens on your session bus (as a monitor: it never calls or holds up the desktop's \
            notification daemon) for the notifications applications send, and forwards each to \
            glassd with the id the desktop gave it, and the desktop's closing of them. Rules in \
            notify.toml say what is forwarded: min_urgency, [[rule]] by app and category (the first \
            that matches decides), [quiet_hours] (only critical ones come through then). While glassd \
            is away, the newest \(NotifyAgentState.queueLimit) wait for it. Exits non-zero when a bus \
            connection is lost (systemd restarts it).
            """)

    @OptionGroup var options: GlobalOptions

    @Option(
        help: ArgumentHelp(
            "The rules (default: $XDG_CONFIG_HOME/glassd/notify.toml, else ~/.config/glassd/notify.toml; no file: forward everything).",
            valueName: "path"))
    var config: String?

    @Flag(help: "Print, for each notification, what would be sent or why not; send nothing (and need no glassd).")
    var dryRun = false

    @Option(help: ArgumentHelp("How long a notification waits for the desktop's id before it is forwarded without one.", valueName: "ms"))
    var replyWaitMs = 1000

    func run() async throws {
        let rules: NotifyRules
        do {
            rules = try NotifyRules.load(path: config, environment: ProcessInfo.processInfo.environment)
        } catch {
            FileHandle.standardError.write(Data("glassctl: \(error)\n".utf8))
            throw ExitCode.failure
        }
        let session: BusConnection
        let overheard: AsyncStream<MonitoredMessage>
        do {
            (session, overheard) = try await BusConnection.monitor(.session, rules: DesktopBus.monitorRules)
        } catch {
            FileHandle.standardError.write(Data("glassctl: cannot listen on the session bus: \(error)\n".utf8))
            throw ExitCode.failure
        }
        var glassd: Client?
        if !dryRun {
            // Never interactive: a background service has nobody to answer a password prompt.
            try await reportingErrors { glassd = try await Client.connect(options.bus == .system ? .system : .session) }
        }
        // Listening (and glassd's bus reached): what the unit (Type=notify) and the tests wait for.
        _ = sd_notify(0, "READY=1")
        if dryRun && !options.json {
            print("notify-agent --dry-run: listening; nothing is sent")
            fflush(nil)
        }
        let ended = await NotifyAgentRun(
            rules: rules, dryRun: dryRun, json: options.json, glassd: glassd, replyBound: .milliseconds(max(0, replyWaitMs)))
            .run(overheard)
        await session.close()
        await glassd?.connection.close()
        FileHandle.standardError.write(Data("glassctl: \(ended)\n".utf8))
        throw ExitCode.failure
    }
}

/// The agent at work: overheard messages and glassd's comings and goings in, calls to glassd
/// (or --dry-run's lines) out, all through `NotifyAgentState` on one task.
struct NotifyAgentRun {
    let rules: NotifyRules
    let dryRun: Bool
    let json: Bool
    let glassd: Client?
    /// How long a Notify call waits for the desktop's reply (its id) before it is forwarded without one.
    let replyBound: Duration

    /// An event for the state, or the end.
    private enum Input: Sendable {
        case event(AgentEvent)
        case connectionLost(String)
    }

    /// Runs until a bus connection is lost; returns which.
    func run(_ overheard: AsyncStream<MonitoredMessage>) async -> String {
        let (inputs, input) = AsyncStream.makeStream(of: Input.self)
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
            var state = NotifyAgentState(rules: rules, dryRun: dryRun)
            var reason = "stopped"
            loop: for await item in inputs {
                switch item {
                case .connectionLost(let why):
                    reason = why
                    break loop
                case .event(let event):
                    for effect in state.handle(event) {
                        perform(effect, group: &group) { input.yield(.event($0)) }
                    }
                }
            }
            group.cancelAll()
            return reason
        }
    }

    private func perform(_ effect: AgentEffect, group: inout DiscardingTaskGroup, _ input: @escaping @Sendable (AgentEvent) -> Void) {
        switch effect {
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

    private func printLine(_ report: NotifyReport) {
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
        do {
            switch item {
            case .notify(let notification, let desktopID):
                _ = try await glassd.manager.notify(notification: notification.fields(desktopID: desktopID), timeoutSeconds: 10)
            case .close(let desktopID):
                try await glassd.manager.closeNotification(desktopID: desktopID, timeoutSeconds: 10)
            }
            return .sent
        } catch let error as BusError {
            return awayErrors.contains(error.name) ? .glassdAway : .refused(error)
        } catch {
            return .glassdAway
        }
    }
}

/// One line of --dry-run: a notification and what would become of it, or a close.
struct NotifyReport: Encodable {
    var action: String
    var app: String?
    var summary: String?
    var urgency: String?
    var category: String?
    var desktop_id: UInt32
    var reason: String?

    init(_ notification: DesktopNotification, desktopID: UInt32, verdict: Verdict) {
        action = verdict.forwards ? "send" : "skip"
        app = notification.appName
        summary = notification.summary
        urgency = notification.urgency.description
        category = notification.category
        desktop_id = desktopID
        reason = verdict.forwards ? nil : verdict.description
    }

    init(closing desktopID: UInt32) {
        action = "close"
        desktop_id = desktopID
    }

    var text: String {
        guard action != "close" else { return "close desktop_id=\(desktop_id)" }
        var line = "\(action) app=\(Self.quoted(app ?? "")) summary=\(Self.quoted(summary ?? "")) urgency=\(urgency ?? "")"
        line += " category=\(category.map(Self.quoted) ?? "-") desktop_id=\(desktop_id)"
        if let reason { line += ": \(reason)" }
        return line
    }

    /// In quotes, with quotes, backslashes and line breaks escaped: one line per notification.
    static func quoted(_ text: String) -> String {
        var out = "\""
        for c in text.unicodeScalars {
            switch c {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default: out.unicodeScalars.append(c)
            }
        }
        return out + "\""
    }
}
