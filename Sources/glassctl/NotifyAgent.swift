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
            glassd with the id the desktop gave it, and the desktop's closing of them; GNOME's own \
            (org.gtk.Notifications: GNotification, the portal) too, with an id of the agent's. Rules in \
            notify.toml say what is forwarded: min_urgency, [[rule]] by app and category (the first \
            that matches decides), [quiet_hours] (only critical ones come through then). While glassd \
            is away, the newest \(NotifyAgentState.queueLimit) wait for it. It also sends glassd \
            the next event of your calendars in Evolution Data Server (within 7 days; for the \
            glance), again when it changes, ends, or a day begins; calendar = false in notify.toml \
            turns that off. It never has polkit ask for a password (--interactive is ignored). Exits \
            non-zero when a bus connection is lost (systemd restarts it).
            """)

    @OptionGroup var options: GlobalOptions

    @Option(
        help: ArgumentHelp(
            "The rules (default: $XDG_CONFIG_HOME/glassd/notify.toml, else ~/.config/glassd/notify.toml; no file: forward everything).",
            valueName: "path"))
    var config: String?

    @Flag(
        help:
            "Print, for each notification, what would be sent or why not, and each next calendar event that would be sent (with --json, an object a line); send nothing (and need no glassd)."
    )
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
            (session, overheard) = try await BusConnection.monitor(
                Self.sessionBus(ProcessInfo.processInfo.environment), rules: DesktopBus.monitorRules + GtkNotificationsBus.monitorRules)
        } catch {
            FileHandle.standardError.write(Data("glassctl: cannot listen on the session bus: \(error)\n".utf8))
            throw ExitCode.failure
        }
        // The calendar is read over a connection of its own: the monitor above only listens.
        var calendar: EDSCalendar?
        var calendarChanges: SignalSubscription?
        if rules.calendar {
            do {
                let reader = EDSCalendar(bus: try await BusConnection.open(Self.sessionBus(ProcessInfo.processInfo.environment)))
                calendar = reader
                // Before READY: a change from then on is heard.
                calendarChanges = try await reader.changes()
            } catch {
                await calendar?.bus.close()
                await session.close()
                FileHandle.standardError.write(Data("glassctl: cannot connect to the session bus: \(error)\n".utf8))
                throw ExitCode.failure
            }
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
            rules: rules, dryRun: dryRun, json: options.json, glassd: glassd, replyBound: .milliseconds(max(0, replyWaitMs)),
            calendar: calendar, calendarChanges: calendarChanges
        )
        .run(overheard)
        await session.close()
        await calendar?.bus.close()
        await glassd?.connection.close()
        FileHandle.standardError.write(Data("glassctl: \(ended)\n".utf8))
        throw ExitCode.failure
    }
}

extension NotifyAgent {
    /// $DBUS_SESSION_BUS_ADDRESS, else the user bus's usual place ($XDG_RUNTIME_DIR/bus), as
    /// sd-bus's own user bus finds it.
    static func sessionBus(_ environment: [String: String]) -> BusAddress {
        if environment["DBUS_SESSION_BUS_ADDRESS"] == nil, let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") {
            return .address("unix:path=\(runtime)/bus")
        }
        return .session
    }
}
