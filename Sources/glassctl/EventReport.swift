// SPDX-License-Identifier: GPL-2.0-or-later
import DesktopCalendar
import Foundation
import NotifyRules

/// --dry-run's line for the calendar's next event, as it would be sent (or its clearing).
struct EventReport: Encodable {
    var action: String
    var summary: String?
    /// Unix seconds, as SetNextEvent takes them.
    var start: Int64?
    var end: Int64?
    var all_day: Bool?

    init(_ event: NextEvent?) {
        guard let event else {
            action = "no_event"
            return
        }
        action = "event"
        summary = event.summary
        start = Int64(event.start.timeIntervalSince1970.rounded(.down))
        end = Int64(event.end.timeIntervalSince1970.rounded(.down))
        all_day = event.allDay
    }

    /// `event summary="Standup" start=2026-11-28T15:00:00+01:00 end=… all_day=false`, or `event none`.
    var text: String {
        guard let summary, let start, let end else { return "event none" }
        let format = ISO8601DateFormatter()
        format.timeZone = .current
        func time(_ t: Int64) -> String { format.string(from: Date(timeIntervalSince1970: TimeInterval(t))) }
        return "event summary=\(NotifyReport.quoted(summary)) start=\(time(start)) end=\(time(end)) all_day=\(all_day ?? false)"
    }
}
