// SPDX-License-Identifier: GPL-2.0-or-later
import DesktopCalendar
import Foundation
import GlassdAPI
import GlassdContract

/// --dry-run's line for the calendar's next event, as it would be sent (or its clearing).
struct EventReport: DryRunLine {
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
        let sent = event.busEvent
        action = "event"
        summary = sent.summary
        start = sent.start
        end = sent.end
        all_day = sent.allDay
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

extension NextEvent {
    /// The event as SetNextEvent takes it (whole unix seconds).
    var busEvent: GlassdBus.Manager1.CalendarEvent {
        GlassdBus.Manager1.CalendarEvent(
            summary: summary, start: Int64(start.timeIntervalSince1970.rounded(.down)),
            end: Int64(end.timeIntervalSince1970.rounded(.down)), allDay: allDay)
    }
}
