// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation

/// A written number: digits with an optional decimal point and optional thousands commas
/// ("1,000.5", ".5"). No sign (that is an operator) and no exponent ("1e400" is not a number here).
enum NumberLiteral {
    static func scan(_ characters: [Character], from start: Int) -> (Double, Int)? {
        func isDigit(_ at: Int) -> Bool { at < characters.count && characters[at].isASCII && characters[at].isNumber }
        var index = start
        var literal = ""
        while isDigit(index) {
            literal.append(characters[index])
            index += 1
            // A comma between digit groups: exactly three digits follow, then no further digit.
            if index < characters.count, characters[index] == ",", !literal.isEmpty, isDigit(index + 1),
                isDigit(index + 2), isDigit(index + 3), !isDigit(index + 4)
            {
                index += 1
            }
        }
        if index < characters.count, characters[index] == ".", isDigit(index + 1) {
            literal.append(".")
            index += 1
            while isDigit(index) {
                literal.append(characters[index])
                index += 1
            }
        }
        guard !literal.isEmpty, literal != ".", let value = Double(literal), value.isFinite else { return nil }
        return (value, index)
    }

    /// A whole word that is a written number, as the unit skill reads quantities.
    static func value(of word: String) -> Double? {
        let characters = Array(word)
        guard let (value, end) = scan(characters, from: 0), end == characters.count else { return nil }
        return value
    }
}
