// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import Foundation
import GlassdAPI
import GlassdContract

/// The real glassd's display desk as a test sees it: Manager1's notifications, DisplayStats and
/// DisplayQueue over a connection of the test's own.
struct DisplayDeskView: Sendable {
    let bus: BusConnection

    var manager: GlassdBus.Manager1.Proxy { .init(bus, destination: GlassdBus.name, path: GlassdBus.managerPath) }

    /// One entry of Manager1.Notifications.
    struct Kept: Sendable, CustomStringConvertible {
        var id: UInt32
        var summary: String
        var urgency: UInt8
        var state: String
        var description: String { "\(id) \(summary) (\(urgency)) \(state)" }
    }

    /// Manager1.Notify with these fields; glassd's id.
    func notify(_ app: String, _ summary: String, urgency: UInt8 = 1, expireMs: Int32? = nil) async throws -> UInt32 {
        try await manager.notify(notification: .init(appName: app, summary: summary, urgency: urgency, expireMs: expireMs))
    }

    /// Manager1.Notifications: all kept, newest first.
    func notifications() async throws -> [Kept] {
        let reply = try await manager.notifications(limit: 0)
        return (reply.elements ?? []).compactMap { entry in
            // (id, arrived, app name, summary, body, urgency, state)
            guard let f = entry.elements, f.count == 7, let id = f[0].uint32, let summary = f[3].string, let state = f[6].string,
                case .byte(let urgency) = f[5]
            else { return nil }
            return Kept(id: id, summary: summary, urgency: urgency, state: state)
        }
    }

    /// DisplayQueue as (id, what, showing).
    func queue() async throws -> [(id: String, what: String, showing: Bool)] {
        Self.queue(try await property(GlassdBus.Property.displayQueue))
    }

    static func queue(_ value: DBusValue) -> [(id: String, what: String, showing: Bool)] {
        (value.unwrapped.elements ?? []).compactMap { entry in
            guard let f = entry.elements, f.count == 3, let id = f[0].string, let what = f[1].string, let showing = f[2].bool
            else { return nil }
            return (id, what, showing)
        }
    }

    func stats() async throws -> GlassdBus.Manager1.DisplayCounts {
        try GlassdBus.Manager1.DisplayCounts(try await property(GlassdBus.Property.displayStats).unwrapped)
    }

    private func property(_ name: String) async throws -> DBusValue {
        let reply = try await bus.call(
            GlassdBus.name, path: GlassdBus.managerPath, interface: "org.freedesktop.DBus.Properties", member: "Get",
            [.string(GlassdBus.managerInterface), .string(name)])
        guard let value = reply.first else { throw TestFailure("no \(name)") }
        return value
    }

    /// Waits (on PropertiesChanged, bounded) until DisplayStats satisfy `done`, after `action`; returns them.
    @discardableResult
    func waitForStats(
        timeout: Duration = .seconds(20), after action: () async throws -> Void = {},
        _ done: @escaping @Sendable (GlassdBus.Manager1.DisplayCounts) -> Bool
    ) async throws -> GlassdBus.Manager1.DisplayCounts {
        let changes = try await bus.signals(
            SignalMatch(path: GlassdBus.managerPath, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"))
        try await action()
        let now = try await stats()
        if done(now) { return now }
        return try await within(timeout, failure: { "DisplayStats did not come to that within \(timeout): \((try? await stats()).map { "\($0)" } ?? "?")" }) {
            for await signal in changes {
                guard let value = signal.arguments.dropFirst().first?.stringKeyed?[GlassdBus.Property.displayStats],
                    let counts = try? GlassdBus.Manager1.DisplayCounts(value.unwrapped)
                else { continue }
                if done(counts) { return counts }
            }
            throw TestFailure("signals ended")
        }
    }

    /// Waits (on PropertiesChanged, bounded) until DisplayQueue satisfies `done`, after `action`.
    func waitForQueue(
        timeout: Duration = .seconds(20), after action: () async throws -> Void = {},
        _ done: @escaping @Sendable ([(id: String, what: String, showing: Bool)]) -> Bool
    ) async throws {
        let changes = try await bus.signals(
            SignalMatch(path: GlassdBus.managerPath, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"))
        try await action()
        if done(try await queue()) { return }
        try await within(timeout, failure: { "DisplayQueue did not come to that within \(timeout): \((try? await queue()).map { "\($0)" } ?? "?")" }) {
            for await signal in changes {
                guard let value = signal.arguments.dropFirst().first?.stringKeyed?[GlassdBus.Property.displayQueue] else { continue }
                if done(Self.queue(value)) { return }
            }
            throw TestFailure("signals ended")
        }
    }
}
