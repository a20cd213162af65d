// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation
import Testing

@testable import DesktopCalendar

/// The rules calendar apps write beyond a plain repeat: the nth weekday of a month ("the last
/// Friday"), days of the month, months of the year, weekdays of a daily rule, BYSETPOS. "Now" is
/// Friday 27 March 2026, 12:00 UTC, local time Berlin (NextEventTests).
@Suite("Repeating events by weekday, month day, month and position", .timeLimit(.minutes(1)))
struct RecurrenceRuleTests {
    typealias T = NextEventTests

    static func next(_ rule: String, start: String, now: Date = T.now) -> Date? {
        T.next(T.event("SUMMARY:R", "DTSTART:\(start)", "DURATION:PT30M", "RRULE:\(rule)"), now: now)?.start
    }

    @Test("the nth weekday of the month: the last Friday, the second Tuesday; with COUNT")
    func nthWeekday() {
        // 30 January 2026 was the last Friday of its month, 27 March is.
        #expect(Self.next("FREQ=MONTHLY;BYDAY=-1FR", start: "20260130T150000Z") == T.utc("20260327T150000Z"))
        #expect(Self.next("FREQ=MONTHLY;BYDAY=-1FR;COUNT=3", start: "20260130T150000Z") == T.utc("20260327T150000Z"))
        #expect(Self.next("FREQ=MONTHLY;BYDAY=-1FR;COUNT=2", start: "20260130T150000Z") == nil)
        // 13 January 2026 was the second Tuesday; April's is the 14th.
        #expect(Self.next("FREQ=MONTHLY;BYDAY=2TU", start: "20260113T080000Z", now: T.utc("20260410T000000Z")) == T.utc("20260414T080000Z"))
        #expect(Self.next("FREQ=MONTHLY;BYDAY=+2TU", start: "20260113T080000Z", now: T.utc("20260410T000000Z")) == T.utc("20260414T080000Z"))
        // Every other month from January: March's second Tuesday was the 10th, May's is beyond the week.
        #expect(Self.next("FREQ=MONTHLY;INTERVAL=2;BYDAY=2TU", start: "20260113T080000Z", now: T.utc("20260410T000000Z")) == nil)
        // The fifth Monday: only months that have one (March 2026 has, on the 30th).
        #expect(Self.next("FREQ=MONTHLY;BYDAY=5MO", start: "20251229T090000Z") == T.utc("20260330T090000Z"))
    }

    @Test("BYSETPOS: the last weekday of the month, the first Monday or Friday")
    func setPosition() {
        // March 2026 ends on a Tuesday.
        #expect(Self.next("FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1", start: "20260130T150000Z") == T.utc("20260331T150000Z"))
        // As Outlook writes the last Friday.
        #expect(Self.next("FREQ=MONTHLY;BYDAY=FR;BYSETPOS=-1", start: "20260130T150000Z") == T.utc("20260327T150000Z"))
        // April 2026 begins on a Wednesday: its first Monday or Friday is Friday the 3rd.
        #expect(Self.next("FREQ=MONTHLY;BYDAY=MO,FR;BYSETPOS=1", start: "20260302T090000Z", now: T.utc("20260328T000000Z")) == T.utc("20260403T090000Z"))
    }

    @Test("days of the month: the 1st and 15th, the last day; a 31st only where there is one")
    func monthDays() {
        #expect(Self.next("FREQ=MONTHLY;BYMONTHDAY=1,15", start: "20260101T090000Z") == T.utc("20260401T090000Z"))
        #expect(Self.next("FREQ=MONTHLY;BYMONTHDAY=-1", start: "20260131T090000Z") == T.utc("20260331T090000Z"))
        // April has no 31st: after 31 March the next is in May, beyond the week.
        #expect(Self.next("FREQ=MONTHLY;BYMONTHDAY=31", start: "20260131T090000Z", now: T.utc("20260401T000000Z")) == nil)
        // Friday the 13th, with BYDAY limiting BYMONTHDAY: November 2026 has one.
        #expect(Self.next("FREQ=MONTHLY;BYDAY=FR;BYMONTHDAY=13", start: "20260213T090000Z", now: T.utc("20261110T000000Z")) == T.utc("20261113T090000Z"))
        // DAILY limited to days of the month.
        #expect(Self.next("FREQ=DAILY;BYMONTHDAY=28,29", start: "20260101T090000Z") == T.utc("20260328T090000Z"))
    }

    @Test("months of the year: Thanksgiving, DTSTART's day in the months named; weekdays of a daily rule")
    func monthsAndWeekdays() {
        // The fourth Thursday of November: 26 November 2026.
        #expect(Self.next("FREQ=YEARLY;BYMONTH=11;BYDAY=4TH", start: "20251127T180000Z", now: T.utc("20261120T000000Z")) == T.utc("20261126T180000Z"))
        #expect(Self.next("FREQ=YEARLY;BYMONTH=3,9", start: "20250328T100000Z") == T.utc("20260328T100000Z"))
        #expect(Self.next("FREQ=YEARLY;BYMONTH=9", start: "20250328T100000Z") == nil)
        // The 20th week-day... of the year: a plain BYDAY in a YEARLY rule is every such weekday.
        #expect(Self.next("FREQ=YEARLY;BYDAY=SU", start: "20260104T100000Z") == T.utc("20260329T100000Z"))
        // The year's last Monday (28 December 2026).
        #expect(Self.next("FREQ=YEARLY;BYDAY=-1MO", start: "20251229T100000Z", now: T.utc("20261225T000000Z")) == T.utc("20261228T100000Z"))
        // Every weekday, written as a daily rule: past 15:00 on Friday the next is Monday.
        #expect(Self.next("FREQ=DAILY;BYDAY=MO,TU,WE,TH,FR", start: "20260302T150000Z", now: T.utc("20260327T170000Z")) == T.utc("20260330T150000Z"))
        // Weekly, in summer months only.
        #expect(Self.next("FREQ=WEEKLY;BYMONTH=6,7,8", start: "20250602T150000Z") == nil)
        #expect(Self.next("FREQ=WEEKLY;BYMONTH=6,7,8", start: "20250602T150000Z", now: T.utc("20260528T000000Z")) == T.utc("20260601T150000Z"))
    }

    @Test("the civil day count agrees with Foundation's Gregorian calendar: dates and weekdays from 1600 to 2400")
    func civilDays() throws {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        var day = try #require(CivilDay(year: 1600, month: 1, day: 1))
        var date = try #require(calendar.date(from: DateComponents(year: 1600, month: 1, day: 1)))
        // Every 7th day over 800 years, which meets every month length and leap rule.
        while day.parts.year < 2400 {
            let parts = calendar.dateComponents([.year, .month, .day, .weekday], from: date)
            #expect(day.parts == (parts.year!, parts.month!, parts.day!), "\(day.number)")
            #expect(day.weekday == parts.weekday)
            #expect(CivilDay(year: parts.year!, month: parts.month!, day: parts.day!) == day)
            day = day.adding(7)
            date = calendar.date(byAdding: .day, value: 7, to: date)!
        }
        #expect(CivilDay(year: 1970, month: 1, day: 1)?.number == 0)
        #expect(CivilDay(year: 2026, month: 2, day: 29) == nil)
        #expect(CivilDay(year: 2000, month: 2, day: 29) != nil)
        #expect(CivilDay(year: 1900, month: 2, day: 29) == nil)
    }
}
