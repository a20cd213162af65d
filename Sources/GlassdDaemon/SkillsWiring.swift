// SPDX-License-Identifier: GPL-2.0-or-later
import AssistantEngine
import Concurrency
import Foundation
import Glasses
import Skills
import Storage

/// The local skills as the assistant asks them: the question with what they need to know (the
/// time and zone, the glasses' state, the last turn), read when a question comes.
enum SkillsWiring {
    static func answering(
        _ skills: LocalSkills, store: any ConversationStore, glasses: Watched<SessionStatus>?
    ) -> LocalAnswering {
        { question in
            var context = SkillContext(
                now: Date(), timeZone: .current, locale: Locale(identifier: "en_US_POSIX"),
                glasses: glasses.flatMap { state(of: $0.current) })
            guard var found = skills.answer(question, context: context) else { return nil }
            // The history is read only for a question that asks for it.
            if found.skill == .repeat {
                context.lastTurn = await lastTurn(store)
                found = skills.answer(question, context: context) ?? found
            }
            return LocalAnswer(answeredBy: "skill:\(found.skill.rawValue)", answer: found.answer)
        }
    }

    static func state(of status: SessionStatus) -> GlassesState? {
        guard status.state != .unpaired else { return nil }
        return GlassesState(
            connected: status.state == .ready || status.state == .busy, battery: status.info?.battery.map(Int.init),
            name: nil, state: status.state.rawValue)
    }

    static func lastTurn(_ store: any ConversationStore) async -> (question: String, answer: String)? {
        guard let last = try? await store.recentMessages(limit: 2), last.count == 2, last[0].role == .user,
            last[1].role == .assistant
        else { return nil }
        return (last[0].text, last[1].text)
    }
}
