// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import Foundation
import GlassdAPI
import GlassdContract

/// glassctl notify-agent's world: two private buses. On the user's session bus, python-dbusmock's
/// notification daemon stands in for the desktop's and notify-send sends; on the other, which the
/// agent is told is the system bus, a stand-in glassd (Tests/Fixtures/glassd_notify_mock.py)
/// records what it is sent.
struct NotifyWorld: Sendable {
    let directory: String
    let session: String
    let system: String

    static let desktopName = "org.freedesktop.Notifications"

    /// A desktop session bus and a "system" bus for the stand-in glassd, until `body` ends.
    static func with<R: Sendable>(_ body: (NotifyWorld) async throws -> R) async throws -> R {
        try await withBus("session") { directory, session in
            try await withBus("system", in: directory) { _, system in
                try await body(NotifyWorld(directory: directory, session: session, system: system))
            }
        }
    }

    /// A desktop session bus only, the agent forwarding to the glassd on `glassdBus` (a real one).
    static func with<R: Sendable>(glassdBus: String, _ body: (NotifyWorld) async throws -> R) async throws -> R {
        try await withBus("session") { directory, session in
            try await body(NotifyWorld(directory: directory, session: session, system: glassdBus))
        }
    }

    /// A private dbus-daemon of `type` (its address to `body`), in `directory` or a new one removed after.
    private static func withBus<R: Sendable>(
        _ type: String, in directory: String? = nil, _ body: (String, String) async throws -> R
    ) async throws -> R {
        let folder = try directory ?? Paths.temporaryDirectory()
        defer {
            if directory == nil, ProcessInfo.processInfo.environment["GLASSD_KEEP_TEST_DIRS"] == nil {
                try? FileManager.default.removeItem(atPath: folder)
            }
        }
        let config = try writeBusConfig(in: folder, type: type)
        return try await withBackground(
            "/usr/bin/dbus-daemon", ["--config-file=\(config)", "--nofork", "--print-address=1"],
            log: folder + "/\(type)-bus.log", firstLine: true
        ) { _, address in try await body(folder, address) }
    }

    /// The desktop's notification daemon (dbusmock's template: ids from 1) until `body` ends.
    func withDesktopDaemon<R: Sendable>(_ body: () async throws -> R) async throws -> R {
        try await withMock(["--template", "notification_daemon"], on: session, name: Self.desktopName, log: "desktop.log", body)
    }

    /// The desktop's daemon, but it answers Notify only after `seconds` (its id 42), until `body` ends.
    func withSlowDesktopDaemon<R: Sendable>(seconds: Int, _ body: () async throws -> R) async throws -> R {
        let path = "/org/freedesktop/Notifications", interface = "org.freedesktop.Notifications"
        return try await withDesktopDaemon {
            let added = try await runCommand(
                "busctl",
                ["--address=\(session)", "call", Self.desktopName, path, "org.freedesktop.DBus.Mock", "AddMethod", "sssss", interface,
                 "Notify", "susssasa{sv}i", "u", "import time\ntime.sleep(\(seconds))\nret = 42"])
            guard added.ok else { throw TestFailure("AddMethod: \(added.stderr)") }
            return try await body()
        }
    }

    /// The stand-in glassd until `body` ends.
    func withGlassd<R: Sendable>(_ body: () async throws -> R) async throws -> R {
        try await withMock(
            ["--system", "--template", Paths.fixtures + "/glassd_notify_mock.py"], on: system, name: GlassdBus.name, log: "glassd.log", body)
    }

    /// A python-dbusmock on bus `address`; `body` starts once it owns `name`.
    func withMock<R: Sendable>(
        _ arguments: [String], on address: String, name: String, log: String, _ body: () async throws -> R
    ) async throws -> R {
        let bus = try await BusConnection.open(.address(address))
        do {
            let owners = try await bus.signals(
                SignalMatch(sender: "org.freedesktop.DBus", interface: "org.freedesktop.DBus", member: "NameOwnerChanged"))
            let result = try await withBackground(
                "/usr/bin/python3", ["-m", "dbusmock"] + arguments,
                environment: ["DBUS_SESSION_BUS_ADDRESS": address, "DBUS_SYSTEM_BUS_ADDRESS": address],
                log: directory + "/" + log, firstLine: false
            ) { _, _ in
                let owned = try await bus.call(
                    "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: "NameHasOwner",
                    [.string(name)])
                if owned.first != .bool(true) {
                    try await within(.seconds(20), failure: { "\(name) was not taken; the log:\n" + read(log) }) {
                        for await signal in owners
                        where signal.arguments.first?.string == name && signal.arguments.last?.string?.isEmpty == false {
                            return
                        }
                        throw TestFailure("signals ended")
                    }
                }
                return try await body()
            }
            await bus.close()
            return result
        } catch {
            await bus.close()
            throw error
        }
    }

    /// `glassctl notify-agent` with `arguments`, glassd's bus as the system bus, this world's
    /// folder as $XDG_CONFIG_HOME (so a rules file is glassd/notify.toml in it), until `body`
    /// ends; `body` starts once the agent listens (READY=1).
    func withAgent<R: Sendable>(
        _ arguments: [String] = [], _ body: (Background) async throws -> R
    ) async throws -> R {
        let notify = try NotifySocket(path: directory + "/notify-\(UUID().uuidString.prefix(6))")
        let environment = [
            "DBUS_SESSION_BUS_ADDRESS": session, "DBUS_SYSTEM_BUS_ADDRESS": system, "NOTIFY_SOCKET": notify.path,
            "XDG_CONFIG_HOME": directory,
        ]
        return try await withBackground(
            Paths.glassctl, ["notify-agent", "--bus", "system"] + arguments, environment: environment, log: directory + "/agent.log",
            firstLine: arguments.contains("--dry-run")
        ) { agent, _ in
            guard await notify.wait(for: "READY=1") else { throw TestFailure("the agent never became ready; its log:\n" + read("agent.log")) }
            return try await body(agent)
        }
    }

    /// Writes the agent's rules file (read at its start).
    func writeRules(_ text: String) throws {
        try FileManager.default.createDirectory(atPath: directory + "/glassd", withIntermediateDirectories: true)
        try text.write(toFile: directory + "/glassd/notify.toml", atomically: true, encoding: .utf8)
    }

    /// notify-send on the session bus (it returns once the desktop's daemon has answered); with
    /// `-p` it prints the desktop's id.
    func notifySend(_ arguments: [String]) async throws -> CommandResult {
        let result = try await runCommand("/usr/bin/notify-send", arguments, environment: ["DBUS_SESSION_BUS_ADDRESS": session])
        guard result.ok else { throw TestFailure("notify-send \(arguments): \(result.stderr)") }
        return result
    }

    /// The desktop closes notification `id` (as its user dismissing it would): NotificationClosed.
    func desktopCloses(_ id: UInt32) async throws {
        let result = try await runCommand(
            "busctl",
            ["--address=\(session)", "call", Self.desktopName, "/org/freedesktop/Notifications", "org.freedesktop.Notifications",
             "CloseNotification", "i", "\(id)"])
        guard result.ok else { throw TestFailure("CloseNotification: \(result.stderr)") }
    }

    /// A connection to bus `address` for `body`, closed after it (also when it throws).
    func withConnection<R: Sendable>(_ address: String, _ body: (BusConnection) async throws -> R) async throws -> R {
        let bus = try await BusConnection.open(.address(address))
        do {
            let result = try await body(bus)
            await bus.close()
            return result
        } catch {
            await bus.close()
            throw error
        }
    }

    /// The stand-in glassd's MethodCalled signals, from now on, to `body` (over a connection of
    /// its own on glassd's bus, closed after `body`).
    func withGlassdCalls<R: Sendable>(_ body: (AsyncStream<BusSignal>) async throws -> R) async throws -> R {
        try await withConnection(system) { bus in
            try await body(try await bus.signals(SignalMatch(interface: "org.freedesktop.DBus.Mock", member: "MethodCalled")))
        }
    }

    /// What the stand-in glassd has been called with so far (GetCalls), in order.
    func recordedCalls() async throws -> [GlassdCall] {
        let reply = try await withConnection(system) { bus in
            try await bus.call(GlassdBus.name, path: GlassdBus.managerPath, interface: "org.freedesktop.DBus.Mock", member: "GetCalls")
        }
        // a(tsav): (time, method, arguments)
        return (reply.first?.elements ?? []).compactMap { call in
            guard let fields = call.elements, fields.count == 3, let name = fields[1].string else { return nil }
            return GlassdCall(name: name, arguments: (fields[2].elements ?? []).map(\.unwrapped))
        }
    }

    /// A file of this world's folder, or "" when there is none.
    func read(_ name: String) -> String {
        (try? String(contentsOfFile: directory + "/" + name, encoding: .utf8)) ?? ""
    }
}

/// One call the stand-in glassd received.
struct GlassdCall: Sendable, CustomStringConvertible {
    var name: String
    var arguments: [DBusValue]

    init(name: String, arguments: [DBusValue]) {
        self.name = name
        self.arguments = arguments
    }

    /// From a MethodCalled(s name, av arguments) signal.
    init?(_ signal: BusSignal) {
        guard signal.arguments.count == 2, let name = signal.arguments[0].string else { return nil }
        self.init(name: name, arguments: (signal.arguments[1].elements ?? []).map(\.unwrapped))
    }

    /// Notify's notification.
    var notification: GlassdBus.Manager1.NotificationFields? {
        guard name == "Notify", let value = arguments.first else { return nil }
        return try? GlassdBus.Manager1.NotificationFields(value)
    }

    /// CloseNotification's desktop id.
    var closed: UInt32? { name == "CloseNotification" ? arguments.first?.uint32 : nil }

    /// SetNextEvent's event.
    var event: GlassdBus.Manager1.CalendarEvent? {
        guard name == "SetNextEvent", let value = arguments.first else { return nil }
        return try? GlassdBus.Manager1.CalendarEvent(value)
    }

    var description: String {
        "\(name)(\(notification.map { "\($0)" } ?? event.map { "\($0)" } ?? arguments.description))"
    }
}

/// The next `count` calls of `calls` (MethodCalled signals) that `matching` takes, within 20 s; by
/// default the notification calls (SetNextEvent, which the agent makes at its start, is skipped).
func nextCalls(
    _ count: Int, _ calls: AsyncStream<BusSignal>, world: NotifyWorld,
    matching: @escaping @Sendable (GlassdCall) -> Bool = { $0.name != "SetNextEvent" }
) async throws -> [GlassdCall] {
    try await within(
        .seconds(20),
        failure: {
            let recorded = (try? await world.recordedCalls()).map { "\($0)" } ?? "none"
            return "glassd was not called \(count) time(s) (its calls: \(recorded)); the agent's log:\n" + world.read("agent.log")
        }
    ) {
        var seen: [GlassdCall] = []
        for await signal in calls {
            if let call = GlassdCall(signal), matching(call) { seen.append(call) }
            if seen.count == count { return seen }
        }
        throw TestFailure("signals ended after \(seen)")
    }
}

/// The next SetNextEvent call's event, within 20 s (the notification calls before it skipped).
func nextEvent(_ calls: AsyncStream<BusSignal>, world: NotifyWorld) async throws -> GlassdBus.Manager1.CalendarEvent {
    let call = try await nextCalls(1, calls, world: world) { $0.name == "SetNextEvent" }
    guard let event = call.first?.event else { throw TestFailure("SetNextEvent without an event: \(call)") }
    return event
}
