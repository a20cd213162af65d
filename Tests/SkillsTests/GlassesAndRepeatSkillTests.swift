// SPDX-License-Identifier: GPL-2.0-or-later
import AnswerModel
import Foundation
import Skills
import Testing

@Suite("Glasses and repeat skills", .timeLimit(.minutes(5)))
struct GlassesAndRepeatSkillTests {
    let ready = GlassesState(connected: true, battery: 80, name: "Frame", state: "ready")
    let gone = GlassesState(connected: false, battery: nil, name: nil, state: "disconnected")

    @Test("battery and connection come from the glasses' state")
    func glasses() {
        for question in ["what's my battery", "Battery level?", "how much battery do the glasses have"] {
            #expect(LocalSkills().answer(question, context: context(glasses: ready))?.skill == .glasses)
            #expect(ask(question, context(glasses: ready)) == "The glasses' battery is at 80 %.", "\(question)")
            #expect(ask(question, context(glasses: gone)) == "The glasses are not connected, so their battery is unknown.")
            #expect(ask(question, context()) == "No glasses are paired.")
        }
        let noLevel = GlassesState(connected: true, state: "ready")
        #expect(ask("battery level", context(glasses: noLevel)) == "The glasses have not reported their battery.")
        #expect(ask("are my glasses connected", context(glasses: ready)) == "The glasses are connected.")
        #expect(ask("are my glasses connected", context(glasses: gone)) == "The glasses are not connected.")
        #expect(ask("are my glasses connected", context()) == "No glasses are paired.")
        #expect(ask("glasses status", context(glasses: ready))
            == "The glasses (Frame) are connected, state ready. The battery is at 80 %.")
        #expect(ask("glasses status", context(glasses: gone)) == "The glasses are not connected, state disconnected.")
        #expect(ask("glasses status", context()) == "No glasses are paired.")
    }

    @Test("repeat tells the last question or answer")
    func repeatWithTurn() {
        let turn = context(lastTurn: (question: "What is the capital of France?", answer: "Paris."))
        for question in ["what did I just ask", "What was my last question?"] {
            let answer = LocalSkills().answer(question, context: turn)
            #expect(answer?.skill == .repeat)
            #expect(answer?.answer.textForm == "You asked: What is the capital of France?")
        }
        for question in ["repeat that", "Say that again.", "repeat the last answer", "please repeat that"] {
            #expect(ask(question, turn) == "Paris.", "\(question)")
        }
    }

    @Test("repeat without a last turn says so")
    func repeatWithoutTurn() {
        for question in ["what did I just ask", "repeat that", "say that again"] {
            #expect(ask(question) == "There is nothing to repeat yet.", "\(question)")
        }
    }
}
