// SPDX-License-Identifier: GPL-2.0-or-later
import AnswerModel
import Foundation
import Skills
import Testing

@Suite("Time and date skills", .timeLimit(.minutes(5)))
struct TimeAndDateSkillTests {
    @Test("the time is told in the context's zone, on a 24-hour clock", arguments: [
        ("UTC", "It is 14:05."), ("America/New_York", "It is 09:05."), ("Asia/Kolkata", "It is 19:35."),
    ])
    func time(zone: String, expected: String) {
        for question in ["What time is it?", "what's the time", "Time, please.", "tell me the time", "current time",
                         "Hey glasses, what time is it", "whats the time now", "OK, what is the time?"] {
            let answer = LocalSkills().answer(question, context: context(zone: zone))
            #expect(answer?.skill == .time, "\(question)")
            #expect(answer?.answer.textForm == expected, "\(question)")
        }
    }

    @Test("the date is today's in the context's zone", arguments: [
        ("UTC", "Today is Thursday, 26 November 2026."), ("America/New_York", "Today is Thursday, 26 November 2026."),
        ("Asia/Kolkata", "Today is Thursday, 26 November 2026."),
    ])
    func date(zone: String, expected: String) {
        for question in ["what's the date", "What day is it?", "what is today's date", "today's date", "Today’s date."] {
            let answer = LocalSkills().answer(question, context: context(zone: zone))
            #expect(answer?.skill == .date, "\(question)")
            #expect(answer?.answer.textForm == expected, "\(question)")
        }
    }

    @Test("near midnight the zone decides the day")
    func midnight() {
        // 2026-11-27 02:00 UTC: still Thursday evening in New York, already Friday morning in Kolkata.
        let late = Date(timeIntervalSince1970: 1_795_701_909 + 11 * 3600 + 54 * 60 + 51)
        #expect(ask("what's the date", context(zone: "America/New_York", now: late)) == "Today is Thursday, 26 November 2026.")
        #expect(ask("what's the time", context(zone: "America/New_York", now: late)) == "It is 21:00.")
        #expect(ask("what's the date", context(zone: "Asia/Kolkata", now: late)) == "Today is Friday, 27 November 2026.")
        #expect(ask("what's the time", context(zone: "Asia/Kolkata", now: late)) == "It is 07:30.")
    }
}
