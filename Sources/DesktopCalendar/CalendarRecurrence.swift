// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation

/// The part of an RRULE (RFC 5545 3.3.10) that is handled: FREQ DAILY, WEEKLY, MONTHLY or
/// YEARLY, INTERVAL, COUNT, UNTIL, WKST, BYMONTH, BYMONTHDAY, BYDAY (with the nth weekday in a
/// month or year: "2TU", "-1FR") and BYSETPOS, as the RFC's table lets each frequency use them.
/// A rule with anything else (BYHOUR, BYWEEKNO, BYYEARDAY, HOURLY...) is not read (nil), and
/// its event counts with its own first occurrence only.
struct CalendarRecurrence: Equatable {
    enum Frequency: String {
        case daily = "DAILY", weekly = "WEEKLY", monthly = "MONTHLY", yearly = "YEARLY"
    }

    /// A BYDAY entry: a weekday (1 Sunday ... 7 Saturday), every one in the period or the nth.
    struct Weekday: Equatable {
        var ordinal: Int?
        var weekday: Int
    }

    var frequency: Frequency
    var interval = 1
    var count: Int?
    var until: ICalTime?
    /// Empty: DTSTART's weekday (WEEKLY), or not limited.
    var weekdays: [Weekday] = []
    var weekStart = 2
    var months: [Int] = []
    /// 1...31, or -31...-1 counted from the month's end.
    var monthDays: [Int] = []
    var setPositions: [Int] = []

    /// Periods looked at for one event at most (fuzzed rules stay cheap).
    static let maxPeriods = 5000
    /// Values of one BYxxx part at most.
    static let maxListValues = 400

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
                guard let days = Self.list(text, Self.weekday) else { return nil }
                weekdays = days
            case "BYMONTH":
                guard let list = Self.list(text, { Int($0).flatMap { (1...12).contains($0) ? $0 : nil } }) else { return nil }
                months = list
            case "BYMONTHDAY":
                guard let list = Self.list(text, { Self.signed($0, limit: 31) }) else { return nil }
                monthDays = list
            case "BYSETPOS":
                guard let list = Self.list(text, { Self.signed($0, limit: 366) }) else { return nil }
                setPositions = list
            default:
                return nil  // BYHOUR, BYMINUTE, BYSECOND, BYWEEKNO, BYYEARDAY: not handled
            }
        }
        guard let frequency, count == nil || until == nil else { return nil }
        // As the RFC allows: the nth weekday only in a month or a year, BYMONTHDAY not in a
        // week, BYSETPOS only beside another BYxxx.
        let ordinals = weekdays.contains { $0.ordinal != nil }
        if ordinals && (frequency == .daily || frequency == .weekly) { return nil }
        if !monthDays.isEmpty && frequency == .weekly { return nil }
        if !setPositions.isEmpty && weekdays.isEmpty && months.isEmpty && monthDays.isEmpty { return nil }
        self.frequency = frequency
    }

    /// The distinct values of a comma-separated list, each read by `read`; nil if any is bad.
    private static func list<T: Equatable>(_ text: String, _ read: (String) -> T?) -> [T]? {
        var values: [T] = []
        for item in text.split(separator: ",", omittingEmptySubsequences: false) {
            guard values.count < maxListValues, let value = read(String(item)) else { return nil }
            if !values.contains(value) { values.append(value) }
        }
        return values.isEmpty ? nil : values
    }

    /// "MO", "2TU", "+1WE", "-1FR".
    private static func weekday(_ text: String) -> Weekday? {
        guard text.count >= 2, let day = dayNames[String(text.suffix(2)).uppercased()] else { return nil }
        let number = text.dropLast(2)
        if number.isEmpty { return Weekday(ordinal: nil, weekday: day) }
        guard let ordinal = signed(String(number), limit: 53) else { return nil }
        return Weekday(ordinal: ordinal, weekday: day)
    }

    /// A non-zero integer within ±`limit` ("+3" too).
    private static func signed(_ text: String, limit: Int) -> Int? {
        guard let n = Int(text), n != 0, abs(n) <= limit else { return nil }
        return n
    }

    /// No BYxxx part: one occurrence each period, on DTSTART's day where the period has it.
    var plain: Bool { weekdays.isEmpty && months.isEmpty && monthDays.isEmpty && setPositions.isEmpty }

    /// The starts of the occurrences from `start` (the event's DTSTART, in `zone`) that begin
    /// before `before`, leaving out those that begin before `from` where that is cheap to know.
    /// COUNT counts from DTSTART (EXDATEs count too); UNTIL is inclusive. Each occurrence is at
    /// DTSTART's local time of day.
    func starts(of start: Date, zone: TimeZone, from: Date, before: Date) -> [Date] {
        let calendar = ICalendarText.calendar(zone)
        let startParts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: start)
        let fromParts = calendar.dateComponents([.year, .month, .day], from: from)
        guard let startDay = CivilDay(year: startParts.year ?? 0, month: startParts.month ?? 0, day: startParts.day ?? 0) else {
            return start < before ? [start] : []
        }
        // A day two before `from`'s (zones apart) and earlier cannot hold an occurrence that matters.
        let fromDay = CivilDay(year: fromParts.year ?? 0, month: fromParts.month ?? 0, day: fromParts.day ?? 0)?.adding(-2) ?? startDay
        let limit: Date
        if let until {
            // A date-only UNTIL takes in its whole (local) day.
            limit = until.allDay ? (ICalendarText.calendar(until.zone).date(byAdding: .day, value: 1, to: until.date) ?? until.date) : until.date.addingTimeInterval(1)
        } else {
            limit = .distantFuture
        }
        let end = min(before, limit)
        // Periods with exactly one occurrence each (no BYxxx part, no 31st or 29 February to
        // skip) can be counted without being made: the periods long past are skipped at once.
        // Otherwise only without COUNT (there is nothing to count then).
        let (day, month) = (startParts.day ?? 1, startParts.month ?? 1)
        let regular =
            plain
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
        /// Counts an occurrence, keeping `date`; false once COUNT is reached.
        func take(_ date: Date?) -> Bool {
            counted += 1
            if let date { out.append(date) }
            return count.map { counted < $0 } ?? true
        }
        if first == 0 {
            guard start < end, take(start) else { return out }
        }
        for period in first..<(first + Self.maxPeriods) {
            let (begins, days) = self.period(period * interval, from: startDay)
            // Every later period begins after the end: done (no date arithmetic far beyond it).
            guard let beginsAt = Self.date(begins, at: DateComponents(hour: 0), calendar), beginsAt < end else { break }
            // Days come in order: the first beyond the end ends it.
            for day in days where day > startDay {
                guard day >= fromDay else {
                    guard take(nil) else { return out }
                    continue
                }
                guard let date = Self.date(day, at: startParts, calendar) else { continue }
                guard date < end else { return out }
                guard take(date) else { return out }
            }
        }
        return out
    }

    /// `day` at the time of day in `time`, in `calendar`'s zone (a time summer time skips moves on).
    static func date(_ day: CivilDay, at time: DateComponents, _ calendar: Calendar) -> Date? {
        let (year, month, d) = day.parts
        return calendar.date(
            from: DateComponents(year: year, month: month, day: d, hour: time.hour ?? 0, minute: time.minute ?? 0, second: time.second ?? 0))
    }
}
