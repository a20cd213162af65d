// SPDX-License-Identifier: GPL-2.0-or-later
import AnswerModel
import Foundation

/// "What is 17 times 23", "(2 + 3) * 4", "15 percent of 80": the whole utterance must be one
/// calculation with at least one operator; a bare number ("what is 1975") goes to the model.
enum ArithmeticSkill {
    private static let openings = ["what is ", "how much is ", "calculate ", "compute ", "evaluate ", "what are "]
    private static let endings = [" equals", " equal", " =", "="]

    static func answer(_ text: String) -> TypedAnswer? {
        var expression = Substring(text)
        for opening in openings where expression.hasPrefix(opening) {
            expression = expression.dropFirst(opening.count)
            break
        }
        for ending in endings where expression.hasSuffix(ending) {
            expression = expression.dropLast(ending.count)
            break
        }
        guard let tokens = ExpressionLexer.tokens(String(expression)), tokens.contains(where: \.isOperator) else {
            return nil
        }
        do throws(ExpressionFailure) {
            let value = try ExpressionParser.evaluate(tokens)
            // Overflow ("1e300 times 1e300") is not an answer anyone can use.
            guard value.isFinite else { return nil }
            return TypedAnswer([.number(value: Rounding.tidy(value), unit: "")])
        } catch .divisionByZero {
            return .text("Division by zero has no answer.")
        } catch .negativeSquareRoot {
            return .text("A negative number has no real square root.")
        } catch {
            return nil
        }
    }
}
