// SPDX-License-Identifier: GPL-2.0-or-later
import AnswerModel
import Foundation
import Skills

/// The tests' clock: Thursday 2026-11-26 14:05:09 UTC.
let fixedNow = Date(timeIntervalSince1970: 1_795_701_909)

func context(
    zone: String = "UTC", glasses: GlassesState? = nil, lastTurn: (question: String, answer: String)? = nil,
    now: Date = fixedNow
) -> SkillContext {
    SkillContext(
        now: now, timeZone: TimeZone(identifier: zone)!, locale: Locale(identifier: "en_US_POSIX"), glasses: glasses,
        lastTurn: lastTurn)
}

/// The answer's text form, or nil when no skill answered.
func ask(_ question: String, _ context: SkillContext = context(), skills: LocalSkills = LocalSkills()) -> String? {
    skills.answer(question, context: context)?.answer.textForm
}
