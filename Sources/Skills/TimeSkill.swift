// SPDX-License-Identifier: GPL-2.0-or-later
import AnswerModel
import Foundation

/// "What time is it": the local time on a 24-hour clock. A place named ("... in Tokyo") is not
/// matched: the model knows zones by name, this skill only knows the wearer's.
enum TimeSkill {
    static let questions: Set<String> = [
        "time", "the time", "current time", "the current time", "local time", "time now", "the time now",
        "what time is it", "what time is it now", "what time is it right now", "what is the time",
        "what is the time now", "what is the current time", "what is the time right now",
        "tell me the time", "what time it is", "tell me what time it is", "do you know what time it is",
        "can you tell me the time", "could you tell me the time", "do you have the time",
    ]

    static func answer(_ text: String, context: SkillContext) -> TypedAnswer? {
        guard questions.contains(text) else { return nil }
        let parts = ClockReading(context.now, in: context.timeZone)
        return .text("It is \(twoDigits(parts.hour)):\(twoDigits(parts.minute)).")
    }

    private static func twoDigits(_ value: Int) -> String {
        value < 10 ? "0\(value)" : String(value)
    }
}

/// The calendar fields the time and date skills tell, read in one zone with the Gregorian
/// calendar (not the locale's, so answers are the same everywhere).
struct ClockReading {
    var year, month, day, weekday, hour, minute: Int

    init(_ date: Date, in zone: TimeZone) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let fields = calendar.dateComponents([.year, .month, .day, .weekday, .hour, .minute], from: date)
        year = fields.year ?? 0
        month = fields.month ?? 1
        day = fields.day ?? 1
        weekday = fields.weekday ?? 1
        hour = fields.hour ?? 0
        minute = fields.minute ?? 0
    }
}
