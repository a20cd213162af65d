// SPDX-License-Identifier: GPL-2.0-or-later

/// A day of the proleptic Gregorian calendar, as a count of days from 1 January 1970: a
/// repeating event's days are worked out on these, with no time zone in the way, and only the
/// days that matter become dates.
struct CivilDay: Hashable, Comparable {
    var number: Int

    init(number: Int) {
        self.number = number
    }

    /// nil for a day the month does not have (30 February, the 31st of April).
    init?(year: Int, month: Int, day: Int) {
        guard (1...12).contains(month), day >= 1, day <= Self.length(year: year, month: month) else { return nil }
        // Days from the civil date, counting years from March so that the leap day comes last.
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        number = era * 146_097 + dayOfEra - 719_468
    }

    var parts: (year: Int, month: Int, day: Int) {
        let z = number + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shifted = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shifted + 2) / 5 + 1
        let month = shifted < 10 ? shifted + 3 : shifted - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    var month: Int { parts.month }

    /// 1 Sunday ... 7 Saturday, as Foundation's calendar counts (1 January 1970 was a Thursday).
    var weekday: Int { ((number % 7) + 7 + 4) % 7 + 1 }

    func adding(_ days: Int) -> CivilDay { CivilDay(number: number + days) }

    static func < (a: CivilDay, b: CivilDay) -> Bool { a.number < b.number }

    static func length(year: Int, month: Int) -> Int {
        switch month {
        case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }
}
