// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import GlassdAPI
import GlassdContract
import NotifyRules

/// org.freedesktop.Notifications as the agent overhears it.
enum DesktopBus {
    static let interface = "org.freedesktop.Notifications"
    static let name = "org.freedesktop.Notifications"

    /// What the agent's monitor connection receives: Notify calls, the desktop daemon's replies
    /// (its id for each; the sender is matched by its well-known name, whoever owns it now, so a
    /// restarted daemon is followed), and NotificationClosed.
    static let monitorRules = [
        "type='method_call',interface='\(interface)',member='Notify'",
        "type='method_return',sender='\(name)'",
        "type='error',sender='\(name)'",
        "type='signal',interface='\(interface)',member='NotificationClosed'",
    ]
}

extension DesktopNotification {
    /// A Notify call's arguments (s app_name, u replaces_id, s app_icon, s summary, s body,
    /// as actions, a{sv} hints, i expire_timeout); nil if they are not that (the desktop's daemon
    /// refuses such a call too).
    init?(notifyArguments arguments: [DBusValue]) {
        guard arguments.count == 8, case .string(let app) = arguments[0], case .uint32(let replacesID) = arguments[1],
            case .string(let summary) = arguments[3], case .string(let body) = arguments[4],
            case .int32(let expireTimeout) = arguments[7]
        else { return nil }
        let hints = arguments[6].stringKeyed ?? [:]
        // The specification says a byte; some senders use another integer type.
        let urgency = hints["urgency"]?.unwrapped.int64.flatMap { UInt8(exactly: $0) }.flatMap(Urgency.init(rawValue:)) ?? .normal
        let category = hints["category"]?.unwrapped.string.flatMap { $0.isEmpty ? nil : $0 }
        self.init(
            appName: app, summary: summary, body: body, urgency: urgency, category: category, replacesID: replacesID,
            expireTimeout: expireTimeout)
    }

    /// Most of this much text reaches glassd, which refuses more than 4 KiB.
    static let textBudget = 4000

    /// What glassd's Notify takes: the text cut (at a character) to fit glassd's limit, the body
    /// last; an empty summary (glassd requires one) is the app's name.
    func fields(desktopID: UInt32) -> GlassdBus.Manager1.NotificationFields {
        let app = Self.prefix(appName, bytes: 256)
        let category = category.map { Self.prefix($0, bytes: 256) }
        let title = summary.isEmpty ? (app.isEmpty ? "Notification" : app) : summary
        let head = Self.prefix(title, bytes: 1024)
        let used = app.utf8.count + head.utf8.count + (category?.utf8.count ?? 0)
        return GlassdBus.Manager1.NotificationFields(
            appName: app, summary: head, body: Self.prefix(body, bytes: Self.textBudget - used), urgency: urgency.rawValue,
            category: category, desktopID: desktopID, expireMs: expireTimeout > 0 ? expireTimeout : nil)
    }

    /// The longest prefix of whole characters of `text` within `bytes` bytes of UTF-8.
    static func prefix(_ text: String, bytes: Int) -> String {
        guard text.utf8.count > bytes else { return text }
        var out = ""
        var count = 0
        for character in text {
            let size = character.utf8.count
            guard count + size <= bytes else { break }
            out.append(character)
            count += size
        }
        return out
    }
}
