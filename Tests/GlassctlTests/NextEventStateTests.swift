// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import DesktopCalendar
import Foundation
import NotifyRules
import Testing

@testable import glassctl

/// The agent's calendar half, event by event: when it reads, what it sends glassd, when it wakes.
@Suite("notify-agent's next calendar event", .timeLimit(.minutes(1)))
struct NextEventStateTests {
    static let utc = TimeZone(identifier: "UTC")!
    /// Saturday 28 November 2026, 10:00 UTC.
    static let now = Date(timeIntervalSince1970: 1_795_860_000)
    static let midnight = Date(timeIntervalSince1970: 1_795_910_400)
    static let standup = NextEvent(summary: "Standup", start: now + 3600, end: now + 4500, allDay: false)
    static let review = NextEvent(summary: "Review", start: now + 7200, end: now + 9000, allDay: false)

    static func state(_ rules: NotifyRules = NotifyRules(), dryRun: Bool = false) -> NotifyAgentState {
        NotifyAgentState(rules: rules, dryRun: dryRun, zone: utc)
    }

    @Test("at start it reads; the event goes to glassd once it is there, and the timer is set to the event's end")
    func firstRead() {
        var state = Self.state()
        #expect(Self.midnight.timeIntervalSince(Self.now) == 14 * 3600)
        #expect(state.start() == [.readCalendar])
        #expect(state.handle(.calendarRead(Self.standup, now: Self.now, note: nil)) == [.wakeCalendar(at: Self.standup.end)])
        #expect(state.handle(.glassdPresent(true)) == [.sendEvent(Self.standup)])
        #expect(state.handle(.eventSent(.sent)).isEmpty)
        // The same again: not sent again.
        #expect(state.handle(.calendarChanged) == [.readCalendar])
        #expect(state.handle(.calendarRead(Self.standup, now: Self.now + 60, note: nil)) == [.wakeCalendar(at: Self.standup.end)])
    }

    @Test("a change: read again, the new event sent; none: an empty one clears it; no event: woken at local midnight")
    func changes() {
        var state = Self.state()
        _ = state.handle(.glassdPresent(true))
        _ = state.start()
        #expect(state.handle(.calendarRead(Self.standup, now: Self.now, note: nil)) == [.wakeCalendar(at: Self.standup.end), .sendEvent(Self.standup)])
        _ = state.handle(.eventSent(.sent))
        #expect(state.handle(.calendarChanged) == [.readCalendar])
        #expect(state.handle(.calendarRead(Self.review, now: Self.now, note: nil)) == [.wakeCalendar(at: Self.review.end), .sendEvent(Self.review)])
        _ = state.handle(.eventSent(.sent))
        #expect(state.handle(.calendarTimer) == [.readCalendar])
        #expect(state.handle(.calendarRead(nil, now: Self.now, note: nil)) == [.wakeCalendar(at: Self.midnight), .sendEvent(nil)])
        // An event ending after midnight: midnight comes first.
        let late = NextEvent(summary: "Late", start: Self.midnight - 60, end: Self.midnight + 3600, allDay: false)
        _ = state.handle(.eventSent(.sent))
        _ = state.handle(.calendarChanged)
        #expect(state.handle(.calendarRead(late, now: Self.now, note: nil)) == [.wakeCalendar(at: Self.midnight), .sendEvent(late)])
    }

    @Test("changes while a read runs make one more read after it, not one each")
    func coalesced() {
        var state = Self.state()
        _ = state.start()
        #expect(state.handle(.calendarChanged).isEmpty)
        #expect(state.handle(.calendarChanged).isEmpty)
        #expect(state.handle(.calendarTimer).isEmpty)
        #expect(state.handle(.calendarRead(nil, now: Self.now, note: nil)) == [.wakeCalendar(at: Self.midnight), .readCalendar])
        #expect(state.handle(.calendarRead(nil, now: Self.now, note: nil)) == [.wakeCalendar(at: Self.midnight)])
    }

    @Test("one call at a time: what changed meanwhile is sent after it")
    func oneAtATime() {
        var state = Self.state()
        _ = state.handle(.glassdPresent(true))
        _ = state.start()
        _ = state.handle(.calendarRead(Self.standup, now: Self.now, note: nil))
        _ = state.handle(.calendarChanged)
        #expect(state.handle(.calendarRead(Self.review, now: Self.now, note: nil)) == [.wakeCalendar(at: Self.review.end)])
        #expect(state.handle(.eventSent(.sent)) == [.sendEvent(Self.review)])
        #expect(state.handle(.eventSent(.sent)).isEmpty)
    }

    @Test("glassd left and came back (a new glassd knows nothing): sent again, a clear too")
    func glassdReturns() {
        var state = Self.state()
        _ = state.handle(.glassdPresent(true))
        _ = state.start()
        _ = state.handle(.calendarRead(nil, now: Self.now, note: nil))
        #expect(state.handle(.eventSent(.sent)).isEmpty)
        #expect(!state.handle(.glassdPresent(false)).contains(.sendEvent(nil)))
        #expect(state.handle(.glassdPresent(true)) == [.sendEvent(nil)])
        _ = state.handle(.eventSent(.sent))
        // Present again without leaving: nothing new to send.
        #expect(state.handle(.glassdPresent(true)).isEmpty)
    }

    @Test("glassd left while the event was sent and the call's answer came after: the glassd back is sent it again")
    func glassdLeftDuringCall() {
        var state = Self.state()
        _ = state.handle(.glassdPresent(true))
        _ = state.start()
        #expect(state.handle(.calendarRead(Self.standup, now: Self.now, note: nil)).contains(.sendEvent(Self.standup)))
        _ = state.handle(.glassdPresent(false))
        #expect(state.handle(.eventSent(.sent)).isEmpty, "glassd is away: nothing to send to")
        #expect(state.handle(.glassdPresent(true)) == [.sendEvent(Self.standup)])
    }

    @Test("glassd did not answer: it is looked for, and sent the event when found; a refusal is logged and not repeated")
    func failures() {
        var state = Self.state()
        _ = state.handle(.glassdPresent(true))
        _ = state.start()
        _ = state.handle(.calendarRead(Self.standup, now: Self.now, note: nil))
        #expect(state.handle(.eventSent(.glassdAway)) == [.checkGlassd])
        #expect(state.handle(.glassdPresent(true)) == [.sendEvent(Self.standup)])
        let effects = state.handle(.eventSent(.refused(BusError(name: "org.freedesktop.DBus.Error.AccessDenied", message: "Not authorized"))))
        #expect(effects.count == 1)
        if case .log(let line)? = effects.first { #expect(line.contains("AccessDenied")) } else { Issue.record("\(effects)") }
        _ = state.handle(.calendarChanged)
        #expect(state.handle(.calendarRead(Self.standup, now: Self.now, note: nil)) == [.wakeCalendar(at: Self.standup.end)])
        _ = state.handle(.calendarChanged)
        #expect(state.handle(.calendarRead(Self.review, now: Self.now, note: nil)) == [.wakeCalendar(at: Self.review.end), .sendEvent(Self.review)])
    }

    @Test("a note on reading (no EDS) is logged once, and again only when it changes")
    func notes() {
        var state = Self.state()
        _ = state.start()
        let absent = "no Evolution Data Server on the session bus: no calendar event for the glance"
        #expect(state.handle(.calendarRead(nil, now: Self.now, note: absent)) == [.log(absent), .wakeCalendar(at: Self.midnight)])
        _ = state.handle(.calendarChanged)
        #expect(state.handle(.calendarRead(nil, now: Self.now, note: absent)) == [.wakeCalendar(at: Self.midnight)])
    }

    @Test("--dry-run reports each event that would be sent, and sends nothing")
    func dryRun() {
        var state = Self.state(dryRun: true)
        _ = state.handle(.glassdPresent(true))
        _ = state.start()
        #expect(state.handle(.calendarRead(nil, now: Self.now, note: nil)) == [.wakeCalendar(at: Self.midnight), .reportEvent(nil)])
        _ = state.handle(.calendarChanged)
        #expect(state.handle(.calendarRead(Self.standup, now: Self.now, note: nil)) == [.wakeCalendar(at: Self.standup.end), .reportEvent(Self.standup)])
        _ = state.handle(.calendarChanged)
        #expect(state.handle(.calendarRead(Self.standup, now: Self.now, note: nil)) == [.wakeCalendar(at: Self.standup.end)])
    }

    @Test("calendar = false: nothing is read; glassd is told there is no event, once")
    func turnedOff() throws {
        var state = Self.state(try NotifyRules.parse("calendar = false"))
        #expect(state.start().isEmpty)
        #expect(state.handle(.glassdPresent(true)) == [.sendEvent(nil)])
        #expect(state.handle(.eventSent(.sent)).isEmpty)
    }

    @Test("the time range query EDS is asked, in UTC as isodate_from_time_t writes it, with the local zone for floating times")
    func query() {
        #expect(
            EDSCalendar.query(from: Self.now, to: Self.now + NextEvent.lookahead, zone: TimeZone(identifier: "Europe/Berlin")!)
                == #"(occur-in-time-range? (make-time "20261128T100000Z") (make-time "20261205T100000Z") "Europe/Berlin")"#)
        #expect(EDSCalendar.query(from: Self.now, to: Self.now + 1, zone: Self.utc) == #"(occur-in-time-range? (make-time "20261128T100000Z") (make-time "20261128T100001Z"))"#)
    }

    @Test("--dry-run's line: the event as it would be sent (unix seconds in JSON), or none")
    func report() throws {
        #expect(EventReport(nil).text == "event none")
        #expect(EventReport(nil).action == "no_event" && EventReport(nil).summary == nil)
        let line = EventReport(NextEvent(summary: "Stand \"up\"", start: Self.now, end: Self.now + 900, allDay: false))
        #expect(line.start == 1_795_860_000 && line.end == 1_795_860_900 && line.all_day == false)
        #expect(line.text.hasPrefix(#"event summary="Stand \"up\"" start=2026-11-28T"#), "\(line.text)")
        #expect(line.text.hasSuffix(" all_day=false"), "\(line.text)")
        let json = String(decoding: try JSONEncoder().encode(line), as: UTF8.self)
        #expect(json.contains(#""start":1795860000"#) && json.contains(#""action":"event""#), "\(json)")
    }

    @Test("the timer goes off once, at the latest time given; a newer time replaces the one before")
    func timer() async throws {
        let (times, give) = AsyncStream.makeStream(of: Date.self, bufferingPolicy: .bufferingNewest(1))
        let (fired, fire) = AsyncStream.makeStream(of: Date.self)
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask { await NotifyAgentRun.timer(times) { fire.yield(Date()) } }
            let start = Date()
            give.yield(start + 3600)  // replaced before it is due
            give.yield(start + 0.2)
            var iterator = fired.makeAsyncIterator()
            let first = try #require(await iterator.next())
            #expect(first >= start + 0.2)
            give.yield(Date() + 0.1)
            let second = try #require(await iterator.next())
            #expect(second > first)
            give.finish()
        }
        fire.finish()
    }
}
