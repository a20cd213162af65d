// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation
import Testing

@testable import DesktopCalendar

/// The next event from iCalendar text as Evolution Data Server returns it (a VEVENT per object,
/// CRLF lines). Local time here is Berlin; "now" is Friday 27 March 2026, 12:00 UTC (13:00 in
/// Berlin), two days before summer time begins there.
@Suite("The calendar's next event from iCalendar", .timeLimit(.minutes(1)))
struct NextEventTests {
    static let berlin = TimeZone(identifier: "Europe/Berlin")!
    static let now = utc("20260327T120000Z")

    static func utc(_ text: String) -> Date {
        ICalendarText.time(text, parameters: [:], local: berlin)!.date
    }

    /// A VEVENT of these property lines (CRLF, as EDS sends them).
    static func event(_ lines: String...) -> String {
        (["BEGIN:VEVENT", "UID:\(lines.count)-\(lines.first ?? "")"] + lines + ["END:VEVENT"]).joined(separator: "\r\n") + "\r\n"
    }

    static func next(_ texts: String..., now: Date = now) -> NextEvent? {
        NextEvent.next(in: texts, now: now, local: berlin)
    }

    @Test("a timed event in UTC: its summary unescaped and unfolded, its start and end")
    func simple() throws {
        let text = Self.event(
            "SUMMARY:Team\\, weekly\\; sync\\nRoom \\\\1 and a lo", " ng line", "DTSTART:20260327T140000Z", "DTEND:20260327T143000Z")
        let next = try #require(Self.next(text))
        #expect(next == NextEvent(summary: "Team, weekly; sync\nRoom \\1 and a long line", start: Self.utc("20260327T140000Z"), end: Self.utc("20260327T143000Z"), allDay: false))
    }

    @Test("the earliest that has not ended: one under way counts; ended, cancelled and those beyond 7 days do not")
    func choosing() {
        let ended = Self.event("SUMMARY:Ended", "DTSTART:20260327T090000Z", "DTEND:20260327T110000Z")
        let ongoing = Self.event("SUMMARY:Ongoing", "DTSTART:20260327T113000Z", "DTEND:20260327T123000Z")
        let later = Self.event("SUMMARY:Later", "DTSTART:20260327T150000Z", "DTEND:20260327T160000Z")
        let cancelled = Self.event("SUMMARY:Cancelled", "STATUS:CANCELLED", "DTSTART:20260327T113500Z", "DTEND:20260327T140000Z")
        let far = Self.event("SUMMARY:Far", "DTSTART:20260403T130000Z", "DTEND:20260403T140000Z")
        #expect(Self.next(ended, later, ongoing, cancelled)?.summary == "Ongoing")
        #expect(Self.next(ended, later, cancelled)?.summary == "Later")
        #expect(Self.next(ended, far) == nil)
        #expect(Self.next(far, now: Self.utc("20260327T130001Z"))?.summary == "Far")
        // It ends exactly now: over.
        #expect(Self.next(ended, now: Self.utc("20260327T110000Z")) == nil)
        // Of no length: counts until it begins.
        let instant = Self.event("SUMMARY:Instant", "DTSTART:20260327T120000Z")
        #expect(Self.next(instant)?.end == Self.now)
        #expect(Self.next(instant, now: Self.now + 1) == nil)
        // No summary: still an event.
        #expect(Self.next(Self.event("DTSTART:20260327T150000Z"))?.summary == "(no title)")
    }

    @Test("all-day events: VALUE=DATE from local midnight to local midnight; without DTEND one day")
    func allDay() throws {
        let holiday = try #require(Self.next(Self.event("SUMMARY:Holiday", "DTSTART;VALUE=DATE:20260327", "DTEND;VALUE=DATE:20260329")))
        #expect(holiday.allDay)
        #expect(holiday.start == Self.utc("20260326T230000Z"))
        #expect(holiday.end == Self.utc("20260328T230000Z"))
        let single = try #require(Self.next(Self.event("SUMMARY:Day", "DTSTART;VALUE=DATE:20260328")))
        #expect(single.start == Self.utc("20260327T230000Z") && single.end == Self.utc("20260328T230000Z"))
        // Summer time begins on the 29th: that day has 23 hours, and still ends at midnight.
        let dst = try #require(Self.next(Self.event("SUMMARY:Sunday", "DTSTART;VALUE=DATE:20260329", "DURATION:P1D")))
        #expect(dst.start == Self.utc("20260328T230000Z") && dst.end == Self.utc("20260329T220000Z"))
    }

    @Test("TZID zones, libical's prefixed ones, an unknown TZID and floating times (local)")
    func zones() throws {
        let york = try #require(Self.next(Self.event("SUMMARY:NY", "DTSTART;TZID=America/New_York:20260327T100000", "DURATION:PT1H")))
        #expect(york.start == Self.utc("20260327T140000Z") && york.end == Self.utc("20260327T150000Z"))
        let prefixed = try #require(
            Self.next(Self.event("SUMMARY:P", "DTSTART;TZID=\"/freeassociation.sourceforge.net/America/New_York\":20260327T100000")))
        #expect(prefixed.start == Self.utc("20260327T140000Z"))
        let unknown = try #require(Self.next(Self.event("SUMMARY:W", "DTSTART;TZID=W. Europe Standard Time:20260327T150000")))
        #expect(unknown.start == Self.utc("20260327T140000Z"))
        let floating = try #require(Self.next(Self.event("SUMMARY:F", "DTSTART:20260327T150000", "DTEND:20260327T153000")))
        #expect(floating.start == Self.utc("20260327T140000Z") && floating.end == Self.utc("20260327T143000Z"))
    }

    @Test("DURATION: weeks, days and times; a bad one is ignored")
    func durations() {
        #expect(ICalendarText.duration("PT1H30M") == ICalDuration(days: 0, seconds: 5400))
        #expect(ICalendarText.duration("P1W2DT3S") == ICalDuration(days: 9, seconds: 3))
        #expect(ICalendarText.duration("-P1D") == ICalDuration(days: -1, seconds: 0))
        for bad in ["P", "PT", "1H", "PT1D", "P1H", "P1.5D", "P99999999D", "PTH", ""] { #expect(ICalendarText.duration(bad) == nil, "\(bad)") }
        let odd = Self.next(Self.event("SUMMARY:Odd", "DTSTART:20260327T150000Z", "DURATION:P1X"))
        #expect(odd?.end == Self.utc("20260327T150000Z"))
    }

    @Test("daily with COUNT, and summer time: the local hour stays")
    func daily() throws {
        let standup = Self.event("SUMMARY:Standup", "DTSTART;TZID=Europe/Berlin:20260325T090000", "DURATION:PT15M", "RRULE:FREQ=DAILY;COUNT=10")
        // On Friday after 09:15: Saturday's.
        #expect(Self.next(standup)?.start == Self.utc("20260328T080000Z"))
        // On Sunday (summer time), 09:00 is 07:00 UTC.
        #expect(Self.next(standup, now: Self.utc("20260329T060000Z"))?.start == Self.utc("20260329T070000Z"))
        // The tenth is on 3 April; after it, none.
        #expect(Self.next(standup, now: Self.utc("20260403T000000Z"))?.start == Self.utc("20260403T070000Z"))
        #expect(Self.next(standup, now: Self.utc("20260403T080000Z")) == nil)
        // Years of occurrences before now: no COUNT, found at once.
        let old = Self.event("SUMMARY:Old", "DTSTART:19900101T150000Z", "DTEND:19900101T160000Z", "RRULE:FREQ=DAILY")
        #expect(Self.next(old)?.start == Self.utc("20260327T150000Z"))
        // Years of them with COUNT: counted to the one, without making each (beyond 5000 periods).
        // 27 March 2026 is the 9583rd day from 1 January 2000.
        let counted = { (count: Int) in Self.event("SUMMARY:C", "DTSTART:20000101T150000Z", "RRULE:FREQ=DAILY;COUNT=\(count)") }
        let afterIt = Self.utc("20260327T160000Z")
        #expect(Self.next(counted(9584), now: afterIt)?.start == Self.utc("20260328T150000Z"))
        #expect(Self.next(counted(9583), now: afterIt) == nil)
        #expect(Self.next(counted(9583))?.start == Self.utc("20260327T150000Z"))
        let monthlyCounted = Self.event("SUMMARY:M", "DTSTART:20000328T150000Z", "RRULE:FREQ=MONTHLY;COUNT=313")
        #expect(Self.next(monthlyCounted)?.start == Self.utc("20260328T150000Z"))
        #expect(Self.next(Self.event("SUMMARY:M", "DTSTART:20000328T150000Z", "RRULE:FREQ=MONTHLY;COUNT=312")) == nil)
        let every3 = Self.event("SUMMARY:E3", "DTSTART:20260301T150000Z", "RRULE:FREQ=DAILY;INTERVAL=3")
        #expect(Self.next(every3)?.start == Self.utc("20260328T150000Z"))
    }

    @Test("weekly with BYDAY, INTERVAL, UNTIL and EXDATE")
    func weekly() throws {
        // From Monday 2 March, Mondays, Wednesdays and Fridays at 08:00 UTC.
        let gym = Self.event("SUMMARY:Gym", "DTSTART:20260302T080000Z", "DTEND:20260302T090000Z", "RRULE:FREQ=WEEKLY;BYDAY=MO,WE,FR")
        #expect(Self.next(gym)?.start == Self.utc("20260330T080000Z"))
        #expect(Self.next(gym, now: Self.utc("20260326T000000Z"))?.start == Self.utc("20260327T080000Z"))
        let excepted = Self.event(
            "SUMMARY:Gym", "DTSTART:20260302T080000Z", "DTEND:20260302T090000Z", "RRULE:FREQ=WEEKLY;BYDAY=MO,WE,FR",
            "EXDATE:20260330T080000Z,20260401T080000Z")
        #expect(Self.next(excepted)?.start == Self.utc("20260403T080000Z"))
        let until = Self.event("SUMMARY:G", "DTSTART:20260302T080000Z", "RRULE:FREQ=WEEKLY;BYDAY=MO,WE,FR;UNTIL=20260327T080000Z")
        #expect(Self.next(until, now: Self.utc("20260327T070000Z"))?.start == Self.utc("20260327T080000Z"))
        #expect(Self.next(until) == nil)
        // Every other Tuesday from 3 March: 17 and 31 March.
        let fortnightly = Self.event("SUMMARY:Review", "DTSTART:20260303T100000Z", "RRULE:FREQ=WEEKLY;INTERVAL=2")
        #expect(Self.next(fortnightly)?.start == Self.utc("20260331T100000Z"))
        let byDay = Self.event("SUMMARY:R", "DTSTART:20260303T100000Z", "RRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=TU,TH")
        #expect(Self.next(byDay)?.start == Self.utc("20260331T100000Z"))
        // An all-day EXDATE takes out that day's occurrence.
        let dayOff = Self.event("SUMMARY:D", "DTSTART:20260320T150000Z", "RRULE:FREQ=DAILY", "EXDATE;VALUE=DATE:20260327")
        #expect(Self.next(dayOff)?.start == Self.utc("20260328T150000Z"))
    }

    @Test("monthly skips months without the day; yearly skips years without 29 February")
    func monthlyYearly() {
        let rent = Self.event("SUMMARY:Rent", "DTSTART;VALUE=DATE:20260131", "RRULE:FREQ=MONTHLY")
        // February has no 31st; March's is within the week.
        #expect(Self.next(rent)?.start == Self.utc("20260330T220000Z"))
        let birthday = Self.event("SUMMARY:Leap", "DTSTART;VALUE=DATE:20240329", "RRULE:FREQ=YEARLY")
        #expect(Self.next(birthday)?.start == Self.utc("20260328T230000Z"))
        let leap = Self.event("SUMMARY:Leap", "DTSTART;VALUE=DATE:20240229", "RRULE:FREQ=YEARLY")
        #expect(Self.next(leap, now: Self.utc("20270226T000000Z")) == nil)
        #expect(Self.next(leap, now: Self.utc("20280226T000000Z"))?.start == Self.utc("20280228T230000Z"))
    }

    @Test("a rule beyond what is handled: only the event's own first occurrence counts")
    func unhandledRule() {
        for rule in [
            "FREQ=YEARLY;BYWEEKNO=13", "FREQ=WEEKLY;BYDAY=1FR", "FREQ=HOURLY", "FREQ=DAILY;BYHOUR=9", "INTERVAL=2", "FREQ=DAILY;COUNT=x",
            "FREQ=WEEKLY;BYMONTHDAY=27", "FREQ=MONTHLY;BYSETPOS=1", "FREQ=MONTHLY;BYMONTHDAY=0", "FREQ=MONTHLY;BYDAY=0FR",
            "FREQ=YEARLY;BYMONTH=13", "FREQ=MONTHLY;BYMONTHDAY=32", "FREQ=DAILY;BYDAY=-1FR", "FREQ=MONTHLY;BYDAY=FR,",
        ] {
            let past = Self.event("SUMMARY:P", "DTSTART:20260227T150000Z", "RRULE:\(rule)")
            #expect(Self.next(past) == nil, "\(rule)")
            let future = Self.event("SUMMARY:F", "DTSTART:20260327T150000Z", "RRULE:\(rule)")
            #expect(Self.next(future)?.start == Self.utc("20260327T150000Z"), "\(rule)")
        }
    }

    @Test("a changed occurrence (RECURRENCE-ID) replaces the one it stands for; a cancelled one removes it")
    func overrides() {
        let master = "BEGIN:VEVENT\r\nUID:s\r\nSUMMARY:Standup\r\nDTSTART:20260320T150000Z\r\nRRULE:FREQ=DAILY\r\nEND:VEVENT\r\n"
        let moved = "BEGIN:VEVENT\r\nUID:s\r\nSUMMARY:Standup (moved)\r\nRECURRENCE-ID:20260327T150000Z\r\nDTSTART:20260327T170000Z\r\nEND:VEVENT\r\n"
        let cancelled = "BEGIN:VEVENT\r\nUID:s\r\nSUMMARY:Standup\r\nSTATUS:CANCELLED\r\nRECURRENCE-ID:20260327T150000Z\r\nDTSTART:20260327T150000Z\r\nEND:VEVENT\r\n"
        #expect(Self.next(master)?.start == Self.utc("20260327T150000Z"))
        #expect(Self.next(master, moved)?.summary == "Standup (moved)")
        #expect(Self.next(master, cancelled)?.start == Self.utc("20260328T150000Z"))
    }

    @Test("within a VCALENDAR, beside a VTIMEZONE, with a VALARM: only the event's own properties; LF lines too")
    func enclosed() throws {
        let text = """
            BEGIN:VCALENDAR
            VERSION:2.0
            BEGIN:VTIMEZONE
            TZID:Europe/Berlin
            BEGIN:STANDARD
            DTSTART:19701025T030000
            END:STANDARD
            END:VTIMEZONE
            BEGIN:VEVENT
            UID:a
            DTSTART;TZID=Europe/Berlin:20260327T160000
            BEGIN:VALARM
            ACTION:EMAIL
            SUMMARY:Alarm mail
            TRIGGER:-PT15M
            END:VALARM
            SUMMARY;LANGUAGE=en:Dentist
            DTEND;TZID=Europe/Berlin:20260327T170000
            END:VEVENT
            END:VCALENDAR
            """
        let next = try #require(Self.next(text))
        #expect(next.summary == "Dentist" && next.start == Self.utc("20260327T150000Z") && next.end == Self.utc("20260327T160000Z"))
        // A summary longer than a glance line is cut, at a character.
        let long = try #require(Self.next(Self.event("SUMMARY:" + String(repeating: "é", count: 300), "DTSTART:20260327T150000Z")))
        #expect(long.summary.utf8.count <= NextEvent.maxSummaryBytes && long.summary.allSatisfy { $0 == "é" } && !long.summary.isEmpty)
    }

    @Test("bad input is skipped, never a crash: bad dates, unclosed events, broken lines, mutations of good text")
    func badInput() {
        let bad = [
            "", "BEGIN:VEVENT", "END:VEVENT", "BEGIN:VEVENT\r\nDTSTART:2026\r\nEND:VEVENT", "BEGIN:VEVENT\r\nDTSTART:20260231T100000Z\r\nEND:VEVENT",
            "BEGIN:VEVENT\r\nDTSTART:20261327T100000Z\r\nEND:VEVENT", "BEGIN:VEVENT\r\nDTSTART:20260327T250000Z\r\nEND:VEVENT",
            "BEGIN:VEVENT\r\nDTSTART;VALUE=DATE:20260327T100000Z\r\nEND:VEVENT", "BEGIN:VEVENT\r\nDTSTART;TZID=\"unclosed:20260327T100000\r\nEND:VEVENT",
            "BEGIN:VEVENT\r\nSUMMARY:no start\r\nEND:VEVENT", "BEGIN:VEVENT\r\nDTSTART:20260327T150000Z\r\nEND:VCALENDAR",
            "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nDTSTART:20260327T150000Z\r\nEND:VCALENDAR\r\nEND:VEVENT",
            String(repeating: "BEGIN:X\r\n", count: 1000), ";;;:::\r\n:\r\n;A=:\r\n\r\n \r\n",
        ]
        for text in bad { #expect(Self.next(text) == nil, "\(text.prefix(60))") }
        // Mutations of a good text (deterministic): whatever comes out, nothing traps.
        let good = Self.event(
            "SUMMARY:Gym\\, again", "DTSTART;TZID=Europe/Berlin:20260302T080000", "DURATION:PT1H", "RRULE:FREQ=WEEKLY;BYDAY=MO,WE,FR;COUNT=40",
            "EXDATE;TZID=Europe/Berlin:20260330T080000")
        var bytes = Array(good.utf8)
        var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        func random(_ n: Int) -> Int {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((seed >> 33) % UInt64(n))
        }
        let alphabet = Array("0123456789TZ;:=,-\"\r\n PDWHMSBYDAYFREQ".utf8)
        for _ in 0..<2000 {
            var mutated = bytes
            for _ in 0...random(4) {
                switch random(3) {
                case 0: mutated[random(mutated.count)] = alphabet[random(alphabet.count)]
                case 1: mutated.remove(at: random(mutated.count))
                default: mutated.insert(alphabet[random(alphabet.count)], at: random(mutated.count))
                }
            }
            _ = NextEvent.next(in: [String(decoding: mutated, as: UTF8.self)], now: Self.now, local: Self.berlin)
            if random(10) == 0 { bytes = mutated }
        }
    }

    @Test("an EDS source is a shown calendar with [Calendar], unless disabled or not selected")
    func sources() {
        let calendar = "[Data Source]\nDisplayName=Personal\nEnabled=true\nParent=local-stub\n\n[Calendar]\nBackendName=local\nSelected=true\n"
        #expect(CalendarSource.isShownCalendar(keyFile: calendar))
        #expect(CalendarSource.isShownCalendar(keyFile: "[Data Source]\nDisplayName=X\n[Calendar]\nBackendName=caldav\n"))
        #expect(!CalendarSource.isShownCalendar(keyFile: calendar.replacingOccurrences(of: "Enabled=true", with: "Enabled=false")))
        #expect(!CalendarSource.isShownCalendar(keyFile: calendar.replacingOccurrences(of: "Selected=true", with: "Selected = false")))
        #expect(!CalendarSource.isShownCalendar(keyFile: "[Data Source]\nDisplayName=Tasks\n[Task List]\nBackendName=local\n"))
        #expect(!CalendarSource.isShownCalendar(keyFile: "garbage\n[\n=\n"))
    }
}
