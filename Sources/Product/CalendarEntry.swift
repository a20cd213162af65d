// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation

/// The desktop calendar's next event, as the user's agent told glassd (Manager1.SetNextEvent).
public struct CalendarEntry: Sendable, Equatable {
    public var summary: String
    public var start: Date
    /// At or after `start`.
    public var end: Date
    /// Whole days: `start` and `end` are local midnights.
    public var allDay: Bool

    public init(summary: String, start: Date, end: Date? = nil, allDay: Bool = false) {
        self.summary = summary
        self.start = start
        self.end = max(end ?? start, start)
        self.allDay = allDay
    }

    /// Its glance line at `now` ("15:00 Standup", "Tue 09:30 Review", "now: Standup",
    /// "today: Holiday"); nil once it is over. Weekdays in English, as the rest of the glance.
    public func line(at now: Date, timeZone: TimeZone = .current) -> String? {
        // An event with no length is over once it began; one with a length, at its end.
        guard end > now || (end == start && start >= now) else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let title = NotificationText.plain(summary)
        if start <= now { return (allDay ? "today: " : "now: ") + title }
        let days = calendar.dateComponents([.day], from: calendar.startOfDay(for: now), to: calendar.startOfDay(for: start)).day ?? 0
        let parts = calendar.dateComponents([.weekday, .day, .month, .hour, .minute], from: start)
        let day: String? =
            switch days {
            case 0: allDay ? "today" : nil
            case 1: "tomorrow"
            case 2...6: Self.weekdays[((parts.weekday ?? 1) - 1) % 7]
            default: "\(parts.day ?? 1) \(Self.months[((parts.month ?? 1) - 1) % 12])"
            }
        if allDay { return "\(day ?? "today"): \(title)" }
        let time = String(format: "%02d:%02d", parts.hour ?? 0, parts.minute ?? 0)
        return [day, time, title].compactMap { $0 }.joined(separator: " ")
    }

    static let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
}
