// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation

/// One VEVENT as a calendar holds it: its first occurrence and, when it repeats, its rule.
struct CalendarEventRecord: Equatable {
    var uid: String
    var summary: String
    var start: ICalTime
    /// How long each occurrence lasts.
    var length: ICalDuration
    /// Set on a changed occurrence of a repeating event (RECURRENCE-ID): the start it replaces.
    var recurrenceID: Date?
    /// nil: it does not repeat, or its rule is beyond what is handled (then its own first
    /// occurrence is all that counts).
    var recurrence: CalendarRecurrence?
    var exceptions: [ICalTime] = []
    var cancelled = false

    /// The end of the occurrence that starts at `start`: whole days in the event's own zone
    /// (an all-day event ends at a local midnight, summer time or not), then exact seconds.
    func end(of start: Date) -> Date {
        let days = ICalendarText.calendar(self.start.zone).date(byAdding: .day, value: length.days, to: start) ?? start
        return days.addingTimeInterval(TimeInterval(length.seconds))
    }

    /// Whether an EXDATE removes the occurrence at `date` (a date-only one: any on that day).
    func isException(_ date: Date) -> Bool {
        exceptions.contains { exception in
            guard exception.allDay else { return abs(exception.date.timeIntervalSince(date)) < 1 }
            return ICalendarText.calendar(exception.zone).isDate(exception.date, inSameDayAs: date)
        }
    }
}

extension CalendarEventRecord {
    /// What an event with no summary is called.
    static let untitled = "(no title)"
    /// The EXDATEs of one event that count at most.
    static let maxExceptions = 1000

    /// The VEVENTs in `text` (whatever encloses them: a VCALENDAR or nothing); those without a
    /// readable DTSTART are left out, and the properties of components within one (a VALARM's
    /// SUMMARY) are not its own.
    static func records(in text: String, local: TimeZone) -> [CalendarEventRecord] {
        var records: [CalendarEventRecord] = []
        var stack: [String] = []
        var properties: [ICalLine] = []
        for line in ICalendarText.lines(text) {
            switch line.name {
            case "BEGIN":
                let name = line.value.uppercased()
                guard stack.count < 32 else { continue }
                stack.append(name)
                if name == "VEVENT" { properties = [] }
            case "END":
                let name = line.value.uppercased()
                guard let index = stack.lastIndex(of: name) else { continue }
                // An END that closes more than its own component: the unclosed event is dropped.
                let closesOnlyItself = index == stack.count - 1
                stack.removeSubrange(index...)
                if name == "VEVENT", closesOnlyItself, let record = record(properties, local: local) { records.append(record) }
            default:
                if stack.last == "VEVENT" { properties.append(line) }
            }
        }
        return records
    }

    private static func record(_ properties: [ICalLine], local: TimeZone) -> CalendarEventRecord? {
        func first(_ name: String) -> ICalLine? { properties.first { $0.name == name } }
        guard let dtstart = first("DTSTART"), let start = ICalendarText.time(dtstart.value, parameters: dtstart.parameters, local: local) else {
            return nil
        }
        var length = ICalDuration(days: start.allDay ? 1 : 0, seconds: 0)
        if let dtend = first("DTEND") {
            if let end = ICalendarText.time(dtend.value, parameters: dtend.parameters, local: local), end.date > start.date {
                if start.allDay {
                    let days = ICalendarText.calendar(start.zone).dateComponents([.day], from: start.date, to: end.date).day ?? 1
                    length = ICalDuration(days: max(1, days), seconds: 0)
                } else {
                    length = ICalDuration(days: 0, seconds: Int(end.date.timeIntervalSince(start.date)))
                }
            }
        } else if let text = first("DURATION")?.value, let duration = ICalendarText.duration(text), duration.days >= 0, duration.seconds >= 0,
            duration.days > 0 || duration.seconds > 0
        {
            length = duration
        }
        let summary = first("SUMMARY").map { ICalendarText.text($0.value).trimmingCharacters(in: .whitespacesAndNewlines) } ?? ""
        var record = CalendarEventRecord(
            uid: first("UID")?.value ?? "", summary: summary.isEmpty ? untitled : summary, start: start, length: length)
        if let line = first("RECURRENCE-ID") {
            record.recurrenceID = ICalendarText.time(line.value, parameters: line.parameters, local: local)?.date
        }
        if record.recurrenceID == nil, let rule = first("RRULE") {
            // A rule beyond what is handled: nil, so only the event's own first occurrence counts.
            record.recurrence = CalendarRecurrence(rule.value, local: local)
        }
        for line in properties where line.name == "EXDATE" {
            record.exceptions += ICalendarText.times(line.value, parameters: line.parameters, local: local)
        }
        // Each occurrence is compared with each EXDATE: bounded.
        record.exceptions = Array(record.exceptions.prefix(maxExceptions))
        record.cancelled = first("STATUS")?.value.uppercased() == "CANCELLED"
        return record
    }
}
