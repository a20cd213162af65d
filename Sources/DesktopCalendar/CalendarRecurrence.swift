// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation

/// The part of an RRULE (RFC 5545 3.3.10) that is handled: FREQ DAILY, WEEKLY, MONTHLY or
/// YEARLY, INTERVAL, COUNT, UNTIL, WKST, and BYDAY (plain weekdays) with WEEKLY. A rule with
/// anything else is not read (nil), and its event counts with its own first occurrence only.
struct CalendarRecurrence: Equatable {
    enum Frequency: String {
        case daily = "DAILY", weekly = "WEEKLY", monthly = "MONTHLY", yearly = "YEARLY"
    }

    var frequency: Frequency
    var interval = 1
    var count: Int?
    var until: ICalTime?
    /// Calendar weekdays (1 Sunday ... 7 Saturday); empty: DTSTART's.
    var weekdays: [Int] = []
    var weekStart = 2

    /// Periods looked at for one event at most (fuzzed rules stay cheap).
    static let maxPeriods = 5000

    static let dayNames = ["SU": 1, "MO": 2, "TU": 3, "WE": 4, "TH": 5, "FR": 6, "SA": 7]

    init?(_ value: String, local: TimeZone) {
        var seen: Set<String> = []
        var frequency: Frequency?
        for part in value.split(separator: ";", omittingEmptySubsequences: true) {
            let pair = part.split(separator: "=", maxSplits: 1)
            guard pair.count == 2 else { return nil }
            let key = pair[0].uppercased(), text = String(pair[1])
            guard seen.insert(key).inserted else { return nil }
            switch key {
            case "FREQ":
                guard let f = Frequency(rawValue: text.uppercased()) else { return nil }
                frequency = f
            case "INTERVAL":
                guard let n = Int(text), (1...10_000).contains(n) else { return nil }
                interval = n
            case "COUNT":
                guard let n = Int(text), n >= 1 else { return nil }
                count = n
            case "UNTIL":
                guard let t = ICalendarText.time(text, parameters: [:], local: local) else { return nil }
                until = t
            case "WKST":
                guard let day = Self.dayNames[text.uppercased()] else { return nil }
                weekStart = day
            case "BYDAY":
                var days: [Int] = []
                for name in text.split(separator: ",") {
                    // "1MO", "-1FR" (the nth weekday) are beyond what is handled.
                    guard let day = Self.dayNames[name.uppercased()] else { return nil }
                    if !days.contains(day) { days.append(day) }
                }
                guard !days.isEmpty else { return nil }
                weekdays = days
            default:
                return nil  // BYMONTHDAY, BYSETPOS, BYHOUR and the rest: not handled
            }
        }
        guard let frequency, weekdays.isEmpty || frequency == .weekly, count == nil || until == nil else { return nil }
        self.frequency = frequency
    }

    /// The starts of the occurrences from `start` (the event's DTSTART, in `zone`) that begin
    /// before `before`, leaving out those that begin before `from` where that is cheap to know.
    /// COUNT counts from DTSTART (EXDATEs count too); UNTIL is inclusive.
    func starts(of start: Date, zone: TimeZone, from: Date, before: Date) -> [Date] {
        let calendar = ICalendarText.calendar(zone)
        let startParts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second, .weekday], from: start)
        let limit: Date
        if let until {
            // A date-only UNTIL takes in its whole (local) day.
            limit = until.allDay ? (ICalendarText.calendar(until.zone).date(byAdding: .day, value: 1, to: until.date) ?? until.date) : until.date.addingTimeInterval(1)
        } else {
            limit = .distantFuture
        }
        let end = min(before, limit)
        // Periods with exactly one occurrence each (no BYDAY, no 31st or 29 February to skip) can
        // be counted without being made: the periods long past are skipped at once. Otherwise
        // only without COUNT (there is nothing to count then).
        let day = startParts.day ?? 1, month = startParts.month ?? 1
        let regular =
            weekdays.isEmpty
            && (frequency == .daily || frequency == .weekly || (frequency == .monthly && day <= 28)
                || (frequency == .yearly && !(month == 2 && day == 29)))
        var first = 0
        if count == nil || regular, from > start {
            let unit: Calendar.Component = frequency == .monthly ? .month : frequency == .yearly ? .year : .day
            let elapsed = calendar.dateComponents([unit], from: start, to: from).value(for: unit) ?? 0
            first = max(0, elapsed / (frequency == .weekly ? 7 : 1) / interval - 1)
        }
        var out: [Date] = []
        // Period 0 is DTSTART's: each period skipped had one occurrence.
        var counted = first
        if let count, counted >= count { return [] }
        /// Keeps `date`; false once COUNT is reached.
        func take(_ date: Date) -> Bool {
            counted += 1
            out.append(date)
            return count.map { counted < $0 } ?? true
        }
        if first == 0 {
            guard start < end, take(start) else { return out }
        }
        // A period's days begin at least this many days after DTSTART's, per period (a week's
        // BYDAY days up to 6 days before DTSTART's weekday).
        let minimumDays: Int
        switch frequency {
        case .daily: minimumDays = 1
        case .weekly: minimumDays = 7
        case .monthly: minimumDays = 28
        case .yearly: minimumDays = 365
        }
        for period in first..<(first + Self.maxPeriods) {
            let step = period * interval
            // Every later period begins after the end: done (no date arithmetic far beyond it).
            if start.addingTimeInterval(TimeInterval(step * minimumDays - 7) * 86_400 - 3600) >= end { break }
            var candidates: [Date] = []
            switch frequency {
            case .daily:
                if let d = calendar.date(byAdding: .day, value: step, to: start) { candidates = [d] }
            case .weekly where weekdays.isEmpty:
                if let d = calendar.date(byAdding: .day, value: step * 7, to: start) { candidates = [d] }
            case .weekly:
                candidates = weekDays(period: step, calendar: calendar, start: start, startParts: startParts)
            case .monthly, .yearly:
                let unit: Calendar.Component = frequency == .monthly ? .month : .year
                // The 31st in a month without one, 29 February in another year: no occurrence.
                if let d = calendar.date(byAdding: unit, value: step, to: start),
                    calendar.component(.day, from: d) == startParts.day, calendar.component(.month, from: d) == startParts.month || unit == .month
                {
                    candidates = [d]
                }
            }
            // Periods come in order, and the days of one too: the first beyond the end ends it.
            for date in candidates.sorted() where date > start {
                guard date < end else { return out }
                guard take(date) else { return out }
            }
        }
        return out
    }

    /// A WEEKLY period's BYDAY days, at DTSTART's time of day: the week `step` weeks after
    /// DTSTART's (weeks begin on WKST).
    private func weekDays(period step: Int, calendar: Calendar, start: Date, startParts: DateComponents) -> [Date] {
        guard let weekday = startParts.weekday else { return [] }
        let back = (weekday - weekStart + 7) % 7
        let midnight = calendar.startOfDay(for: start)
        guard let weekBegins = calendar.date(byAdding: .day, value: step * 7 - back, to: midnight) else { return [] }
        return weekdays.compactMap { day -> Date? in
            let offset = (day - weekStart + 7) % 7
            guard let date = calendar.date(byAdding: .day, value: offset, to: weekBegins) else { return nil }
            var parts = calendar.dateComponents([.year, .month, .day], from: date)
            parts.hour = startParts.hour
            parts.minute = startParts.minute
            parts.second = startParts.second
            return calendar.date(from: parts)
        }
    }
}
