// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation

/// The desktop calendar's next event, as glassd's glance gets it (Manager1.SetNextEvent).
public struct NextEvent: Sendable, Equatable, CustomStringConvertible {
    public var summary: String
    public var start: Date
    public var end: Date
    /// It takes whole days: start and end are local midnights.
    public var allDay: Bool

    public init(summary: String, start: Date, end: Date, allDay: Bool) {
        self.summary = summary
        self.start = start
        self.end = end
        self.allDay = allDay
    }

    /// How far ahead an event is looked for.
    public static let lookahead: TimeInterval = 7 * 86_400
    /// The longest summary sent, in UTF-8 bytes (cut at a character): the glance shows one line.
    public static let maxSummaryBytes = 200

    public var description: String { "\(summary) \(start)–\(end)\(allDay ? " all day" : "")" }

    /// The next event among the iCalendar objects `texts` (what a calendar's GetObjectList
    /// returns): of the occurrences that have not ended at `now` (one under way counts; one of no
    /// length counts until it begins) and begin within `lookahead`, the one that begins first.
    /// Cancelled events and EXDATEs are left out; a changed occurrence (RECURRENCE-ID) replaces
    /// the one it stands for. Floating and all-day times are in `local`.
    public static func next(in texts: [String], now: Date, local: TimeZone = .current) -> NextEvent? {
        let records = texts.flatMap { CalendarEventRecord.records(in: $0, local: local) }
        let horizon = now.addingTimeInterval(lookahead)
        // The occurrences that changed ones stand for, by event.
        var replaced: [String: [Date]] = [:]
        for record in records {
            if let id = record.recurrenceID { replaced[record.uid, default: []].append(id) }
        }
        var best: NextEvent?
        for record in records where !record.cancelled {
            let starts: [Date]
            if let rule = record.recurrence {
                let longest = record.end(of: record.start.date).timeIntervalSince(record.start.date)
                starts = rule.starts(of: record.start.date, zone: record.start.zone, from: now.addingTimeInterval(-longest), before: horizon)
            } else {
                starts = [record.start.date]
            }
            let others = record.recurrenceID == nil ? replaced[record.uid] ?? [] : []
            for start in starts where start < horizon {
                let end = record.end(of: start)
                guard end > now || (end == start && start >= now) else { continue }
                if record.isException(start) || others.contains(where: { abs($0.timeIntervalSince(start)) < 1 }) { continue }
                let candidate = NextEvent(summary: cut(record.summary), start: start, end: end, allDay: record.start.allDay)
                if best.map({ candidate.comesBefore($0) }) ?? true { best = candidate }
                break  // the rest of this event's occurrences begin later
            }
        }
        return best
    }

    private func comesBefore(_ other: NextEvent) -> Bool {
        (start, end, summary) < (other.start, other.end, other.summary)
    }

    static func cut(_ summary: String) -> String {
        guard summary.utf8.count > maxSummaryBytes else { return summary }
        var out = ""
        for c in summary {
            guard out.utf8.count + c.utf8.count <= maxSummaryBytes else { break }
            out.append(c)
        }
        return out
    }
}
