// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation

/// Why a calculation has no number for an answer.
enum ExpressionFailure: Error, Equatable {
    /// Not a calculation at all: the question goes to the model.
    case notAnExpression
    case divisionByZero
    case negativeSquareRoot
}

/// Evaluates tokens by recursive descent, in the usual order: parentheses, roots and powers
/// (right to left, before a leading minus: -3^2 is -9), then times, divided by and "percent of",
/// then plus and minus.
struct ExpressionParser {
    /// Deeper nesting than this is not something anyone says; the bound keeps the stack small.
    private static let deepest = 64

    private let tokens: [ExpressionToken]
    private var index = 0
    private var depth = 0

    private init(_ tokens: [ExpressionToken]) {
        self.tokens = tokens
    }

    static func evaluate(_ tokens: [ExpressionToken]) throws(ExpressionFailure) -> Double {
        var parser = ExpressionParser(tokens)
        let value = try parser.sum()
        guard parser.index == tokens.count else { throw .notAnExpression }
        return value
    }

    private var next: ExpressionToken? { index < tokens.count ? tokens[index] : nil }

    private mutating func sum() throws(ExpressionFailure) -> Double {
        var value = try product()
        while let token = next, token == .plus || token == .minus {
            index += 1
            let right = try product()
            value = token == .plus ? value + right : value - right
        }
        return value
    }

    private mutating func product() throws(ExpressionFailure) -> Double {
        var value = try signed()
        while let token = next, token == .times || token == .divide || token == .percentOf {
            index += 1
            let right = try signed()
            switch token {
            case .times: value *= right
            case .divide:
                guard right != 0 else { throw .divisionByZero }
                value /= right
            default: value = value / 100 * right
            }
        }
        return value
    }

    private mutating func signed() throws(ExpressionFailure) -> Double {
        depth += 1
        defer { depth -= 1 }
        guard depth <= Self.deepest else { throw .notAnExpression }
        switch next {
        case .minus:
            index += 1
            return -(try signed())
        case .plus:
            index += 1
            return try signed()
        case .squareRoot:
            index += 1
            let value = try signed()
            guard value >= 0 else { throw .negativeSquareRoot }
            return value.squareRoot()
        case .cubeRoot:
            index += 1
            return cbrt(try signed())
        default:
            return try power()
        }
    }

    private mutating func power() throws(ExpressionFailure) -> Double {
        let base = try powered()
        guard next == .power else { return base }
        index += 1
        return pow(base, try signed())
    }

    /// A number or parenthesised sum, then any "squared" or "cubed".
    private mutating func powered() throws(ExpressionFailure) -> Double {
        var value: Double
        switch next {
        case .number(let number):
            index += 1
            value = number
        case .open:
            index += 1
            value = try sum()
            guard next == .close else { throw .notAnExpression }
            index += 1
        default:
            throw .notAnExpression
        }
        while let token = next, token == .squared || token == .cubed {
            index += 1
            value = token == .squared ? value * value : value * value * value
        }
        return value
    }
}
