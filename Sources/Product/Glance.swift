// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation
import Glasses

/// What the glance says that the display desk does not know itself.
public struct GlanceFacts: Sendable, Equatable {
    /// Whether the backend is on this machine (false: a server elsewhere); nil: not said.
    public var localBackend: Bool?

    public init(localBackend: Bool? = nil) {
        self.localBackend = localBackend
    }
}

/// The glance: one screen of the time, the battery, the unread notifications, the next event
/// and the backend, short lines for the smallest display (a Monocle's 26 columns).
public enum Glance {
    public static func lines(
        at date: Date, timeZone: TimeZone = .current, info: DeviceInfo?, unread: [DesktopNotification],
        nextEvent: CalendarEntry? = nil, facts: GlanceFacts
    ) -> [String] {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let parts = calendar.dateComponents([.hour, .minute], from: date)
        var first = String(format: "%02d:%02d", parts.hour ?? 0, parts.minute ?? 0)
        if let battery = info?.battery { first += "  Battery \(battery)%" + (info?.charging == true ? "+" : "") }
        var lines = [first]
        if let newest = unread.last {
            lines.append("\(unread.count) unread: \(NotificationText.plain(newest.fields.summary))")
        } else {
            lines.append("No unread notifications")
        }
        if let next = nextEvent?.line(at: date, timeZone: timeZone) { lines.append("Next: \(next)") }
        if let local = facts.localBackend { lines.append(local ? "Answers: on this computer" : "Answers: online") }
        return lines
    }
}

extension DisplayDesk {
    /// The desktop calendar's next event for the glance (nil: none).
    public func setNextEvent(_ entry: CalendarEntry?) { nextEvent = entry }

    func glanceText() async -> String {
        let facts = await glanceFacts()
        let info = await inner.current.info
        return Glance.lines(at: Date(), info: info, unread: notifications.unread, nextEvent: nextEvent, facts: facts).joined(separator: "\n")
    }
}

extension NotificationText {
    /// The heading, text and time on the display of notification `n`, `more` waiting behind it.
    static func shown(_ n: DesktopNotification, more: Int) -> (String, String, Duration) {
        let summary = plain(n.fields.summary)
        let heading = n.fields.appName.isEmpty ? summary : "\(plain(n.fields.appName)): \(summary)"
        var body = String(plain(n.fields.body).prefix(maxBody))
        if more > 0 { body += (body.isEmpty ? "" : "\n") + "+\(more) more" }
        let time = readingTime(heading.count + body.count, least: .seconds(3), most: .seconds(10))
        return (heading, body, time)
    }

    /// What of a body the glasses show (the rest is in Notifications).
    static let maxBody = 280
}
