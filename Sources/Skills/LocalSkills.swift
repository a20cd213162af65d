// SPDX-License-Identifier: GPL-2.0-or-later
import AnswerModel
import Foundation

/// A local skill's stable name, as `[skills] enabled = [...]` spells it.
public enum SkillName: String, Sendable, CaseIterable {
    case time, date, arithmetic, units, glasses, `repeat`
}

/// An answer glassd gave itself, and the skill that gave it.
public struct SkillAnswer: Sendable, Equatable {
    public var skill: SkillName
    public var answer: TypedAnswer

    public init(skill: SkillName, answer: TypedAnswer) {
        self.skill = skill
        self.answer = answer
    }
}

/// Instant answers without a server, tried before the model is asked. Matching is whole-utterance
/// and conservative: anything not clearly a skill's question is nil and goes to the model.
public struct LocalSkills: Sendable {
    public let enabled: Set<SkillName>

    /// Longer utterances are not quick questions; refusing them early bounds the work per call.
    static let longestQuestion = 300

    public init(enabled: Set<SkillName> = Set(SkillName.allCases)) {
        self.enabled = enabled
    }

    public func answer(_ question: String, context: SkillContext) -> SkillAnswer? {
        guard !enabled.isEmpty, question.utf8.count <= Self.longestQuestion else { return nil }
        let text = SkillText.normalise(question)
        guard !text.isEmpty else { return nil }
        // Every matcher is anchored on the whole utterance, so at most one matches; the order
        // does not change the answer.
        for skill in SkillName.allCases where enabled.contains(skill) {
            if let answer = Self.answer(text, skill: skill, context: context) {
                return SkillAnswer(skill: skill, answer: answer)
            }
        }
        return nil
    }

    private static func answer(_ text: String, skill: SkillName, context: SkillContext) -> TypedAnswer? {
        switch skill {
        case .time: TimeSkill.answer(text, context: context)
        case .date: DateSkill.answer(text, context: context)
        case .arithmetic: ArithmeticSkill.answer(text)
        case .units: UnitSkill.answer(text)
        case .glasses: GlassesSkill.answer(text, glasses: context.glasses)
        case .repeat: RepeatSkill.answer(text, lastTurn: context.lastTurn)
        }
    }
}
