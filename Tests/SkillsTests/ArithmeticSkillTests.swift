// SPDX-License-Identifier: GPL-2.0-or-later
import AnswerModel
import Foundation
import Skills
import Testing

@Suite("Arithmetic skill", .timeLimit(.minutes(5)))
struct ArithmeticSkillTests {
    @Test("calculations answer a number part", arguments: [
        ("what is 17 times 23", 391.0), ("17 x 23", 391), ("17x23", 391), ("what's 12 plus 4", 16),
        ("100 divided by 8", 12.5), ("2 to the power of 10", 1024), ("15 percent of 80", 12), ("15% of 80", 12),
        ("square root of 144", 12), ("what is the square root of 144", 12), ("-3 minus 4", -7), ("1.5 * 2", 3),
        ("(2 + 3) * 4", 20), ("2 + 3 * 4", 14), ("2^3^2", 512), ("-3^2", -9), ("2 ^ -1", 0.5), ("10 over 4", 2.5),
        ("6 multiplied by 7", 42), ("calculate 9 - 10", -1), ("how much is 3 squared", 9), ("2 cubed", 8),
        ("what is 0.1 + 0.2", 0.3), ("1,000 times 3", 3000), ("12 ÷ 4", 3), ("3 × 4", 12), ("2**8", 256),
        ("what is 7 - -2", 9), ("what is 2 + 2 =", 4), ("cube root of 27", 3), ("what is .5 times 4", 2),
    ])
    func digits(question: String, value: Double) {
        let answer = LocalSkills().answer(question, context: context())
        #expect(answer?.skill == .arithmetic, "\(question)")
        #expect(answer?.answer == TypedAnswer([.number(value: value, unit: "")]), "\(question)")
    }

    @Test("spoken numbers", arguments: [
        ("twenty five times four", 100.0), ("what is twenty-five times four", 100), ("what's twelve plus four", 16),
        ("one hundred divided by eight", 12.5), ("two to the power of ten", 1024), ("one hundred and five minus five", 100),
        ("two thousand twenty six plus one", 2027), ("three hundred thousand divided by three", 100_000),
        ("zero times nine", 0), ("negative three minus four", -7), ("ninety nine plus 1", 100),
    ])
    func words(question: String, value: Double) {
        #expect(LocalSkills().answer(question, context: context())?.answer == TypedAnswer([.number(value: value, unit: "")]),
                "\(question)")
    }

    @Test("the text form reads as the number")
    func textForm() {
        #expect(ask("what is 17 times 23") == "391")
        #expect(ask("100 divided by 8") == "12.5")
        #expect(ask("1 divided by 3") == "0.333333")
    }

    @Test("division by zero and negative roots say why")
    func undefined() {
        #expect(ask("5 divided by 0") == "Division by zero has no answer.")
        #expect(ask("what is 0 / 0") == "Division by zero has no answer.")
        #expect(ask("square root of -4") == "A negative number has no real square root.")
    }

    @Test("a bare number or broken sum is not a calculation", arguments: [
        "what is 1975", "what is twenty", "what is 5 plus", "plus 5 times", "5 5 plus", "what is (2 + 3",
        "2 + 3)", "twenty twenty plus one", "five twenty plus one", "1.2.3 plus 4", "what is 1e400 times 2",
        "12,34 plus 1", "what is 2 plus two apples",
    ])
    func notCalculations(question: String) {
        #expect(ask(question) == nil, "\(question)")
    }

    @Test("overflow is not an answer")
    func overflow() {
        let huge = String(repeating: "9", count: 200)
        #expect(ask("\(huge) times \(huge)") == nil)
    }
}
