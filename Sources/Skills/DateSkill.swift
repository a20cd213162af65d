// SPDX-License-Identifier: GPL-2.0-or-later
import AnswerModel
import Foundation

/// "What's the date": today's weekday and date in the wearer's zone.
enum DateSkill {
    static let questions: Set<String> = [
        "what is the date", "what is the date today", "what is today's date", "what is todays date",
        "today's date", "todays date", "the date", "the date today", "current date", "the current date",
        "what is the current date", "what date is it", "what date is it today", "what day is it",
        "what day is it today", "what day is today", "what is the day today", "what is today", "which day is it",
        "which day is it today", "tell me the date", "tell me today's date", "what day of the week is it",
    ]
    private static let weekdays = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
    private static let months = [
        "January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
        "November", "December",
    ]

    static func answer(_ text: String, context: SkillContext) -> TypedAnswer? {
        guard questions.contains(text) else { return nil }
        let today = ClockReading(context.now, in: context.timeZone)
        let weekday = weekdays[(today.weekday - 1 + 7) % 7]
        let month = months[(today.month - 1 + 12) % 12]
        return .text("Today is \(weekday), \(today.day) \(month) \(today.year).")
    }
}
