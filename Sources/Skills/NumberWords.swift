// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation

/// Spoken numbers ("twenty five", "one hundred and five", "two thousand twenty six") as speech
/// recognisers often write them. Strict: "five twenty" or "twenty twenty" are not numbers.
enum NumberWords {
    private static let ones: [String: Int] = [
        "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
    ]
    private static let teens: [String: Int] = [
        "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16,
        "seventeen": 17, "eighteen": 18, "nineteen": 19,
    ]
    private static let tens: [String: Int] = [
        "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80,
        "ninety": 90,
    ]
    private static let scales: [String: Double] = ["thousand": 1e3, "million": 1e6, "billion": 1e9]

    /// The number spoken at the start of `words`, and how many words it took.
    static func parse(_ words: ArraySlice<String>) -> (value: Double, count: Int)? {
        guard let first = words.first else { return nil }
        if first == "zero" { return (0, 1) }
        var total = 0.0
        var largestScale = Double.infinity
        var index = words.startIndex
        while let (group, next) = parseGroup(words, from: index) {
            // A group followed by a smaller scale than the last ("two million three thousand").
            if next < words.endIndex, let scale = scales[words[next]], scale < largestScale {
                total += Double(group) * scale
                largestScale = scale
                index = next + 1
                if index < words.endIndex, words[index] == "and", parseGroup(words, from: index + 1) != nil {
                    index += 1
                }
                continue
            }
            total += Double(group)
            index = next
            break
        }
        return index > words.startIndex ? (total, index - words.startIndex) : nil
    }

    /// A number below a thousand: "[one hundred [and]] [twenty [five] | fifteen | five]".
    private static func parseGroup(_ words: ArraySlice<String>, from start: Int) -> (Int, Int)? {
        var index = start
        var value = 0
        func word(_ at: Int) -> String? { at < words.endIndex ? words[at] : nil }
        if let digit = word(index).flatMap({ ones[$0] }), word(index + 1) == "hundred" {
            value = digit * 100
            index += 2
            if word(index) == "and", let next = word(index + 1), ones[next] != nil || teens[next] != nil || tens[next] != nil {
                index += 1
            }
        }
        if let ten = word(index).flatMap({ tens[$0] }) {
            value += ten
            index += 1
            if let digit = word(index).flatMap({ ones[$0] }) {
                value += digit
                index += 1
            }
        } else if let teen = word(index).flatMap({ teens[$0] }) {
            value += teen
            index += 1
        } else if let digit = word(index).flatMap({ ones[$0] }) {
            value += digit
            index += 1
        }
        return index > start ? (value, index) : nil
    }
}
