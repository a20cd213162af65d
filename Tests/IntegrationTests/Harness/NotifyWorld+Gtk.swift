// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation

/// GNOME's org.gtk.Notifications in notify-agent's world: a python-dbusmock stand-in for
/// gnome-shell's, and an application's calls to it (as GNotification makes them).
extension NotifyWorld {
    static let gtkName = "org.gtk.Notifications"
    static let gtkPath = "/org/gtk/Notifications"

    /// A stand-in owning org.gtk.Notifications, with AddNotification and RemoveNotification
    /// (which answer nothing, as gnome-shell's do), until `body` ends.
    func withGtkNotifications<R: Sendable>(_ body: () async throws -> R) async throws -> R {
        try await withMock([Self.gtkName, Self.gtkPath, Self.gtkName], on: session, name: Self.gtkName, log: "gtk.log") {
            for (member, signature) in [("AddNotification", "ssa{sv}"), ("RemoveNotification", "ss")] {
                let added = try await runCommand(
                    "busctl",
                    ["--address=\(session)", "call", Self.gtkName, Self.gtkPath, "org.freedesktop.DBus.Mock", "AddMethod", "sssss",
                     Self.gtkName, member, signature, "", ""])
                guard added.ok else { throw TestFailure("AddMethod \(member): \(added.stderr)") }
            }
            return try await body()
        }
    }

    /// AddNotification(app, id, {title, body, priority}) as an application's GNotification sends it.
    func gtkAdd(app: String, id: String, title: String, body: String, priority: String) async throws {
        try await gtkCall(
            ["AddNotification", "ssa{sv}", app, id, "3", "title", "s", title, "body", "s", body, "priority", "s", priority])
    }

    func gtkRemove(app: String, id: String) async throws {
        try await gtkCall(["RemoveNotification", "ss", app, id])
    }

    /// A call to the stand-in; it returns once the stand-in has answered.
    private func gtkCall(_ arguments: [String]) async throws {
        let result = try await runCommand(
            "busctl", ["--address=\(session)", "call", Self.gtkName, Self.gtkPath, Self.gtkName] + arguments)
        guard result.ok else { throw TestFailure("\(arguments.first ?? ""): \(result.stderr)") }
    }
}
