// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import NotifyRules

/// org.gtk.Notifications as the agent overhears it: what GApplication's GNotification (and, on
/// GNOME, the notification portal) calls on gnome-shell instead of org.freedesktop.Notifications.
/// AddNotification(s app_id, s id, a{sv} notification), RemoveNotification(s app_id, s id);
/// neither answers with an id.
enum GtkNotificationsBus {
    static let interface = "org.gtk.Notifications"
    static let path = "/org/gtk/Notifications"

    static let monitorRules = [
        "type='method_call',path='\(path)',interface='\(interface)',member='AddNotification'",
        "type='method_call',path='\(path)',interface='\(interface)',member='RemoveNotification'",
    ]

    /// A RemoveNotification call's arguments (s app_id, s id); nil if they are not that.
    static func removed(_ arguments: [DBusValue]) -> GtkKey? {
        guard arguments.count == 2, case .string(let app) = arguments[0], case .string(let id) = arguments[1] else { return nil }
        return GtkKey(appID: app, id: id)
    }

    /// An AddNotification call's arguments (s app_id, s id, a{sv}); nil if they are not that.
    static func added(_ arguments: [DBusValue]) -> (GtkKey, DesktopNotification)? {
        guard arguments.count == 3, case .string(let app) = arguments[0], case .string(let id) = arguments[1],
            let fields = arguments[2].stringKeyed
        else { return nil }
        let title = fields["title"]?.unwrapped.string ?? ""
        let body = fields["body"]?.unwrapped.string ?? ""
        let category = fields["category"]?.unwrapped.string.flatMap { $0.isEmpty ? nil : $0 }
        let urgency = urgency(priority: fields["priority"]?.unwrapped.string)
        // The whole application id as the app's name: unique, never translated, the name of its
        // .desktop file and Flatpak; its last part is not (org.telegram.desktop, *.Devel).
        let notification = DesktopNotification(appName: app, summary: title, body: body, urgency: urgency, category: category)
        return (GtkKey(appID: app, id: id), notification)
    }

    /// GNotificationPriority's nick as an urgency: "high" still defers to do-not-disturb in GNOME,
    /// so it is normal; "urgent" goes past it, as critical goes past quiet hours.
    static func urgency(priority: String?) -> Urgency {
        switch priority {
        case "low": .low
        case "urgent": .critical
        default: .normal
        }
    }
}
