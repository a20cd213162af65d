// SPDX-License-Identifier: GPL-2.0-or-later
import Concurrency
import Foundation
import Skills
import Testing

@Suite("Skills on any input", .timeLimit(.minutes(10)))
struct SkillFuzzTests {
    static let pieces = [
        "1", "0", "9", "17", "1e400", ".", ",", "-", "+", "*", "/", "^", "(", ")", "%", "°", "√", "×", " ", " ", " ",
        "times", "plus", "minus", "of", "to", "in", "how many", "what is", "what's", "convert", "km", "miles", "f", "c",
        "twenty", "five", "hundred", "thousand", "and", "zero", "square root of", "squared", "repeat", "battery",
        "time", "date", "?", "!", "hey glasses,", "please", "é", "🙂", "\u{0}", "\n", "\t", "’", "a",
    ]

    @Test("random utterances never crash")
    func random() {
        var random = SplitMix64(seed: 42)
        let skills = LocalSkills()
        let turn = context(glasses: GlassesState(connected: true, battery: 3, state: "ready"), lastTurn: (question: "", answer: ""))
        for _ in 0..<5000 {
            let count = Int.random(in: 1...12, using: &random)
            let text = (0..<count).map { _ in Self.pieces.randomElement(using: &random)! }.joined()
            _ = skills.answer(text, context: turn)
        }
        for _ in 0..<500 {
            let scalars = (0..<Int.random(in: 0...40, using: &random)).compactMap { _ in
                Unicode.Scalar(UInt32.random(in: 0...0x2FFF, using: &random))
            }
            _ = skills.answer(String(String.UnicodeScalarView(scalars)), context: turn)
        }
    }

    @Test("huge numbers, deep nesting and long inputs give nil or a sane answer")
    func extremes() {
        #expect(ask("1e400 times 2") == nil)
        #expect(ask(String(repeating: "(", count: 150) + "1" + String(repeating: ")", count: 150)) == nil)
        #expect(ask(String(repeating: "(", count: 40) + "1 + 1" + String(repeating: ")", count: 40)) == "2")
        #expect(ask(String(repeating: "- ", count: 140) + "1") == nil)
        #expect(ask(String(repeating: "what time is it ", count: 625)) == nil)
        #expect(ask(String(repeating: "9", count: 10_000) + " times 2") == nil)
        #expect(ask(String(repeating: "a", count: 10_000)) == nil)
        #expect(ask(String(repeating: "1 + ", count: 70) + "1") == "71")
    }
}
