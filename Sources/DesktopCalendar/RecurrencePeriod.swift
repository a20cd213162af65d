// SPDX-License-Identifier: GPL-2.0-or-later

/// The days of one period of a rule (RFC 5545 3.3.10's table of how each BYxxx part expands or
/// limits the set, for each frequency), then BYSETPOS.
extension CalendarRecurrence {
    /// Period `step` (DTSTART's is 0; INTERVAL already applied): the day it begins on, and its
    /// days in order.
    func period(_ step: Int, from start: CivilDay) -> (begins: CivilDay, days: [CivilDay]) {
        let (year, month, day) = start.parts
        let begins: CivilDay
        var days: [CivilDay]
        switch frequency {
        case .daily:
            begins = start.adding(step)
            days = [begins].filter { inMonths($0) && onMonthDays($0) && onWeekdays($0) }
        case .weekly:
            begins = start.adding(step * 7 - (start.weekday - weekStart + 7) % 7)
            let wanted = weekdays.isEmpty ? [start.weekday] : weekdays.map(\.weekday)
            days = wanted.map { begins.adding(($0 - weekStart + 7) % 7) }.filter(inMonths)
        case .monthly:
            let index = year * 12 + (month - 1) + step
            let (y, m) = (Self.floorDivision(index, 12), Self.modulo(index, 12) + 1)
            begins = CivilDay(year: y, month: m, day: 1) ?? start
            days = inMonths(begins) ? daysOfMonth(y, m, dtstartDay: day, scope: nil) : []
        case .yearly:
            let y = year + step
            begins = CivilDay(year: y, month: 1, day: 1) ?? start
            let wholeYear = (begins, CivilDay(year: y, month: 12, day: 31) ?? begins)
            if !months.isEmpty {
                days = months.flatMap { daysOfMonth(y, $0, dtstartDay: day, scope: nil) }
            } else if !monthDays.isEmpty {
                // BYMONTHDAY alone names those days of every month; a BYDAY beside it counts in the year.
                days = (1...12).flatMap { daysOfMonth(y, $0, dtstartDay: day, scope: wholeYear) }
            } else if !weekdays.isEmpty {
                days = weekdays(from: wholeYear.0, to: wholeYear.1)
            } else {
                days = CivilDay(year: y, month: month, day: day).map { [$0] } ?? []
            }
        }
        return (begins, chosen(Array(Set(days)).sorted()))
    }

    /// One month's days: its BYMONTHDAYs (BYDAY then limits them), or its BYDAY days, or
    /// DTSTART's day of the month. BYDAY's ordinals count in `scope` (the month when nil).
    private func daysOfMonth(_ year: Int, _ month: Int, dtstartDay: Int, scope: (CivilDay, CivilDay)?) -> [CivilDay] {
        let length = CivilDay.length(year: year, month: month)
        guard let first = CivilDay(year: year, month: month, day: 1) else { return [] }
        let whole = scope ?? (first, first.adding(length - 1))
        if !monthDays.isEmpty {
            let days = monthDays.compactMap { n in CivilDay(year: year, month: month, day: n > 0 ? n : length + 1 + n) }
            guard !weekdays.isEmpty else { return days }
            let allowed = Set(weekdays(from: whole.0, to: whole.1))
            return days.filter(allowed.contains)
        }
        if !weekdays.isEmpty {
            return weekdays(from: whole.0, to: whole.1).filter { $0.month == month }
        }
        return CivilDay(year: year, month: month, day: dtstartDay).map { [$0] } ?? []
    }

    /// The days from `first` to `last` that BYDAY names: each such weekday, or the nth one
    /// (counted from the end when negative).
    private func weekdays(from first: CivilDay, to last: CivilDay) -> [CivilDay] {
        weekdays.flatMap { wanted -> [CivilDay] in
            let earliest = first.adding((wanted.weekday - first.weekday + 7) % 7)
            guard earliest <= last else { return [] }
            let count = (last.number - earliest.number) / 7 + 1
            guard let ordinal = wanted.ordinal else { return (0..<count).map { earliest.adding($0 * 7) } }
            let index = ordinal > 0 ? ordinal - 1 : count + ordinal
            return (0..<count).contains(index) ? [earliest.adding(index * 7)] : []
        }
    }

    /// BYSETPOS: the nth days of the period's set (from the end when negative).
    private func chosen(_ days: [CivilDay]) -> [CivilDay] {
        guard !setPositions.isEmpty else { return days }
        let picked = setPositions.compactMap { n -> CivilDay? in
            let index = n > 0 ? n - 1 : days.count + n
            return days.indices.contains(index) ? days[index] : nil
        }
        return Array(Set(picked)).sorted()
    }

    private func inMonths(_ day: CivilDay) -> Bool { months.isEmpty || months.contains(day.month) }

    private func onWeekdays(_ day: CivilDay) -> Bool { weekdays.isEmpty || weekdays.contains { $0.weekday == day.weekday } }

    private func onMonthDays(_ day: CivilDay) -> Bool {
        guard !monthDays.isEmpty else { return true }
        let (year, month, d) = day.parts
        let length = CivilDay.length(year: year, month: month)
        return monthDays.contains { $0 == d || $0 == d - length - 1 }
    }

    static func floorDivision(_ a: Int, _ b: Int) -> Int { a >= 0 ? a / b : -((-a + b - 1) / b) }
    static func modulo(_ a: Int, _ b: Int) -> Int { a - floorDivision(a, b) * b }
}
