// SPDX-License-Identifier: GPL-2.0-or-later
import AnswerModel
import Foundation

/// "Convert 5 miles to km", "how many feet in 3 meters", "72 °F to °C": a quantity and a target
/// unit, both made of known words only, so "how many miles to the moon" stays with the model.
enum UnitSkill {
    private static let openings: [[String]] = [["convert"], ["what", "is"], ["how", "much", "is"], ["what", "are"]]
    private static let connectors: Set<String> = ["to", "into", "in", "as"]
    /// "how many feet [are there|are|is] in 3 m", "how many pounds is 10 kg".
    private static let fillers: [[String]] = [["are", "there"], ["there", "are"], ["are"], ["is"]]
    private static let equalities: Set<String> = ["is", "are", "make", "makes", "equals"]

    private struct Quantity { var value: Double; var unit: MeasureUnit }

    static func answer(_ text: String) -> TypedAnswer? {
        let words = splitQuantities(text)
        guard words.count >= 3, words.count <= 16 else { return nil }
        if words.starts(with: ["how", "many"]) {
            return howMany(words.dropFirst(2)).map(converted)
        }
        var rest = words[...]
        for opening in openings where rest.starts(with: opening) {
            rest = rest.dropFirst(opening.count)
            break
        }
        // Each connector in turn, as "10 in in cm" has two.
        for split in rest.indices where connectors.contains(rest[split]) {
            if let quantity = quantity(rest[..<split]), let unit = Units.named(rest[(split + 1)...]) {
                return converted(quantity, to: unit)
            }
        }
        return nil
    }

    private static func howMany(_ rest: ArraySlice<String>) -> (Quantity, MeasureUnit)? {
        for split in rest.indices {
            let word = rest[split]
            guard word == "in" || equalities.contains(word) else { continue }
            var target = rest[..<split]
            if word == "in" {
                for filler in fillers where target.count > filler.count && target.suffix(filler.count).elementsEqual(filler) {
                    target = target.dropLast(filler.count)
                    break
                }
            }
            if let unit = Units.named(target), let quantity = quantity(rest[(split + 1)...]) {
                return (quantity, unit)
            }
        }
        return nil
    }

    /// Ounces against a volume ("how many ounces in a cup") are fluid ounces, as the wearer means.
    private static func fluidOunces(_ from: MeasureUnit, _ to: MeasureUnit) -> (MeasureUnit, MeasureUnit) {
        guard let ounce = Units.byName["oz"], let fluid = Units.byName["fl oz"] else { return (from, to) }
        if from == ounce, to.dimension == .volume { return (fluid, to) }
        if to == ounce, from.dimension == .volume { return (from, fluid) }
        return (from, to)
    }

    private static func converted(_ pair: (Quantity, MeasureUnit)) -> TypedAnswer {
        converted(pair.0, to: pair.1)
    }

    private static func converted(_ quantity: Quantity, to unit: MeasureUnit) -> TypedAnswer {
        let (from, unit) = fluidOunces(quantity.unit, unit)
        guard from.dimension == unit.dimension else {
            let named = from.plural.prefix(1).uppercased() + from.plural.dropFirst()
            return .text("\(named) and \(unit.plural) cannot be converted.")
        }
        let value = unit.fromBase(from.toBase(quantity.value))
        guard value.isFinite else { return .text("That is too large to convert.") }
        return TypedAnswer([.number(value: Rounding.fourDigits(value), unit: unit.symbol)])
    }

    /// Four significant digits: more than a spoken answer needs, fewer than float noise.
    /// "[minus] NUMBER UNIT": the number in digits, in words, or "a"/"an" (one).
    private static func quantity(_ words: ArraySlice<String>) -> Quantity? {
        var words = words
        var sign = 1.0
        if let first = words.first, first == "minus" || first == "negative" {
            sign = -1
            words = words.dropFirst()
        }
        guard let first = words.first else { return nil }
        let value: Double
        let count: Int
        if let number = signedLiteral(first) {
            (value, count) = (number, 1)
        } else if first == "a" || first == "an" {
            // "a mile", "an inch"; not "a c to f", where the letter is likely no unit at all.
            guard let unit = Units.named(words.dropFirst()), unit.dimension != .temperature else { return nil }
            return Quantity(value: sign, unit: unit)
        } else if let spoken = NumberWords.parse(words) {
            (value, count) = spoken
        } else {
            return nil
        }
        guard let unit = Units.named(words.dropFirst(count)) else { return nil }
        return Quantity(value: sign * value, unit: unit)
    }

    private static func signedLiteral(_ word: String) -> Double? {
        if word.hasPrefix("-") { return NumberLiteral.value(of: String(word.dropFirst())).map { -$0 } }
        return NumberLiteral.value(of: word)
    }

    /// Words, with a number glued to its unit split off ("5km", "72°f", "-40°c").
    private static func splitQuantities(_ text: String) -> [String] {
        var words: [String] = []
        for word in text.split(separator: " ") {
            let characters = Array(word)
            let start = characters.first == "-" ? 1 : 0
            if let (_, end) = NumberLiteral.scan(characters, from: start), end > start, end < characters.count {
                words.append(String(characters[..<end]))
                words.append(String(characters[end...]))
            } else {
                words.append(String(word))
            }
        }
        return words
    }
}
