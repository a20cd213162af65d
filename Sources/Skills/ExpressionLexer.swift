// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation

/// One piece of a spoken or typed calculation.
enum ExpressionToken: Equatable {
    case number(Double)
    case plus, minus, times, divide, power, percentOf
    case squareRoot, cubeRoot, squared, cubed
    case open, close

    var isOperator: Bool {
        switch self {
        case .number, .open, .close: false
        default: true
        }
    }
}

/// Turns normalised text into tokens: digits and symbols, spoken operators ("multiplied by",
/// "to the power of") and spoken numbers. Any word it does not know makes the whole text not a
/// calculation (nil): that is what keeps "what is 5g" or "times square hotels" for the model.
enum ExpressionLexer {
    private static let phrases: [(words: [String], token: ExpressionToken)] = [
        (["raised", "to", "the", "power", "of"], .power), (["to", "the", "power", "of"], .power),
        (["the", "square", "root", "of"], .squareRoot), (["the", "cube", "root", "of"], .cubeRoot),
        (["raised", "to"], .power), (["to", "the", "power"], .power),
        (["square", "root", "of"], .squareRoot), (["cube", "root", "of"], .cubeRoot),
        (["per", "cent", "of"], .percentOf), (["percent", "of"], .percentOf),
        (["multiplied", "by"], .times), (["divided", "by"], .divide), (["sqrt", "of"], .squareRoot),
        (["plus"], .plus), (["minus"], .minus), (["negative"], .minus), (["times"], .times), (["x"], .times),
        (["over"], .divide), (["sqrt"], .squareRoot), (["squared"], .squared), (["cubed"], .cubed),
    ]
    private static let symbols: [Character: ExpressionToken] = [
        "+": .plus, "-": .minus, "−": .minus, "*": .times, "×": .times, "·": .times, "/": .divide, "÷": .divide,
        "^": .power, "(": .open, ")": .close, "√": .squareRoot,
    ]

    private enum Piece { case number(Double), word(String), symbol(Character) }

    static func tokens(_ text: String) -> [ExpressionToken]? {
        guard let pieces = pieces(text) else { return nil }
        var tokens: [ExpressionToken] = []
        var index = 0
        while index < pieces.count {
            switch pieces[index] {
            case .number(let value):
                tokens.append(.number(value))
                index += 1
            case .symbol(let symbol):
                if symbol == "%", index + 1 < pieces.count, case .word("of") = pieces[index + 1] {
                    tokens.append(.percentOf)
                    index += 2
                } else if symbol == "*", index + 1 < pieces.count, case .symbol("*") = pieces[index + 1] {
                    tokens.append(.power)
                    index += 2
                } else if let token = symbols[symbol] {
                    tokens.append(token)
                    index += 1
                } else {
                    return nil
                }
            case .word:
                let words = wordRun(pieces, from: index)
                if let (token, count) = phrase(words) {
                    tokens.append(token)
                    index += count
                } else if let (value, count) = NumberWords.parse(words[...]) {
                    tokens.append(.number(value))
                    index += count
                } else {
                    return nil
                }
            }
        }
        return tokens
    }

    private static func wordRun(_ pieces: [Piece], from start: Int) -> [String] {
        var words: [String] = []
        for piece in pieces[start...] {
            guard case .word(let word) = piece else { break }
            words.append(word)
        }
        return words
    }

    private static func phrase(_ words: [String]) -> (ExpressionToken, Int)? {
        for (phrase, token) in phrases where words.starts(with: phrase) {
            return (token, phrase.count)
        }
        return nil
    }

    /// Numbers, letter words and single symbols; spaces only separate.
    private static func pieces(_ text: String) -> [Piece]? {
        let characters = Array(text)
        var pieces: [Piece] = []
        var index = 0
        while index < characters.count {
            let character = characters[index]
            if character == " " {
                index += 1
            } else if let (value, next) = NumberLiteral.scan(characters, from: index) {
                pieces.append(.number(value))
                index = next
            } else if character.isLetter {
                var end = index
                while end < characters.count, characters[end].isLetter { end += 1 }
                pieces.append(.word(String(characters[index..<end])))
                index = end
            } else {
                pieces.append(.symbol(character))
                index += 1
            }
        }
        return pieces
    }
}
