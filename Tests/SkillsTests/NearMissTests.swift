// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation
import Skills
import Testing

@Suite("Near misses and disabled skills", .timeLimit(.minutes(5)))
struct NearMissTests {
    @Test("questions that only look like a skill go to the model", arguments: [
        "what time did the train leave yesterday", "how much time do I need to boil an egg", "date ideas for tonight",
        "what time is it in Tokyo", "when is the next date night", "what is the time in new york", "what is 5G",
        "what is the 1975 world cup", "who won 3 times", "what is love", "how many people live in Paris",
        "times square hotels", "how many miles to the moon", "feet of clay", "convert this file to pdf",
        "how long does a car battery last", "repeat after me hello", "how many miles in a marathon",
        "what is 100 degrees in celsius", "", "   ", "?", "hey glasses", "please", "glasses", "x", "date",
        "what is x plus 3", "what is a c to f", "what is the square root", "time flies", "say hello again", "convert 5 to km",
    ])
    func nearMiss(question: String) {
        let answer = LocalSkills().answer(question, context: context(
            glasses: GlassesState(connected: true, battery: 50, state: "ready"), lastTurn: (question: "q", answer: "a")))
        #expect(answer == nil, "\(question)")
    }

    @Test("a disabled skill does not answer", arguments: SkillName.allCases)
    func disabled(skill: SkillName) {
        let questions: [SkillName: String] = [
            .time: "what time is it", .date: "what's the date", .arithmetic: "2 + 2", .units: "5 miles to km",
            .glasses: "battery level", .repeat: "repeat that",
        ]
        let question = questions[skill]!
        let all = LocalSkills()
        let without = LocalSkills(enabled: Set(SkillName.allCases).subtracting([skill]))
        #expect(all.answer(question, context: context())?.skill == skill)
        #expect(without.answer(question, context: context()) == nil)
        #expect(LocalSkills(enabled: []).answer(question, context: context()) == nil)
        #expect(LocalSkills(enabled: [skill]).answer(question, context: context())?.skill == skill)
    }

    @Test("skill names are the config's spelling")
    func names() {
        #expect(SkillName.allCases.map(\.rawValue) == ["time", "date", "arithmetic", "units", "glasses", "repeat"])
    }
}
