// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation
import Glasses
import Product
import Testing

/// The calendar line of the glance, in a fixed time zone, at fixed instants.
@Suite("The glance's calendar line")
struct CalendarEntryTests {
    static let zone = TimeZone(identifier: "Europe/Berlin")!

    /// A local time in `zone` on November 2026 (the 27th is a Friday).
    static func at(_ day: Int, _ hour: Int, _ minute: Int = 0) -> Date {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        return calendar.date(from: DateComponents(year: 2026, month: 11, day: day, hour: hour, minute: minute))!
    }

    @Test("today, tomorrow, this week and later; running now; over", arguments: [
        (at(27, 15), nil as Date?, false, "15:00 Standup"),
        (at(28, 9, 30), nil, false, "tomorrow 09:30 Standup"),
        (at(1, 9, 30).addingTimeInterval(30 * 86_400), nil, false, "Tue 09:30 Standup"),
        (at(27, 9), at(27, 18), false, "now: Standup"),
        (at(27, 0), at(28, 0), true, "today: Standup"),
        (at(28, 0), at(29, 0), true, "tomorrow: Standup"),
        (at(30, 0).addingTimeInterval(4 * 86_400), nil, false, "4 Dec 00:00 Standup"),
    ])
    func line(start: Date, end: Date?, allDay: Bool, expected: String) {
        let entry = CalendarEntry(summary: "<b>Standup</b>", start: start, end: end, allDay: allDay)
        #expect(entry.line(at: Self.at(27, 12), timeZone: Self.zone) == expected)
    }

    @Test("an event is left out once over: at its end, or once begun when it has no length")
    func over() {
        let meeting = CalendarEntry(summary: "Review", start: Self.at(27, 10), end: Self.at(27, 11))
        #expect(meeting.line(at: Self.at(27, 10, 59), timeZone: Self.zone) == "now: Review")
        #expect(meeting.line(at: Self.at(27, 11), timeZone: Self.zone) == nil)
        let reminder = CalendarEntry(summary: "Call", start: Self.at(27, 10))
        #expect(reminder.line(at: Self.at(27, 9, 59), timeZone: Self.zone) == "10:00 Call")
        #expect(reminder.line(at: Self.at(27, 10), timeZone: Self.zone) == "now: Call")
        #expect(reminder.line(at: Self.at(27, 10, 1), timeZone: Self.zone) == nil)
        let backwards = CalendarEntry(summary: "Odd", start: Self.at(27, 13), end: Self.at(27, 12))
        #expect(backwards.end == backwards.start, "an end before the start is taken as the start")
    }

    @Test("the glance has the line after the notifications, and none once the event is over")
    func inGlance() {
        let entry = CalendarEntry(summary: "Standup", start: Self.at(27, 15))
        let lines = Glance.lines(
            at: Self.at(27, 12), timeZone: Self.zone, info: nil, unread: [], nextEvent: entry, facts: GlanceFacts(localBackend: true))
        #expect(lines == ["12:00", "No unread notifications", "Next: 15:00 Standup", "Answers: on this computer"])
        let later = Glance.lines(at: Self.at(27, 16), timeZone: Self.zone, info: nil, unread: [], nextEvent: entry, facts: GlanceFacts())
        #expect(later == ["16:00", "No unread notifications"])
    }
}
