// SPDX-License-Identifier: GPL-2.0-or-later
import AnswerModel
import Concurrency

/// Random typed answers of every kind, with long words, blank lines and non-ASCII letters.
/// Drawn from Concurrency's SplitMix64: the same answers on every run, so a failure can be replayed.
enum RandomAnswers {
    static let letters = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")

    /// Letters and digits only: a table cell's words, which cannot look like a cut mark or a note.
    static func plainWord(_ random: inout SplitMix64) -> String {
        let length = Int.random(in: 0..<12, using: &random) == 0 ? Int.random(in: 27...45, using: &random) : Int.random(in: 1...10, using: &random)
        return String((0..<length).map { _ in letters.randomElement(using: &random)! })
    }

    static func word(_ random: inout SplitMix64) -> String {
        var word = plainWord(&random)
        if Int.random(in: 0..<8, using: &random) == 0 { word += ["\u{E9}", "\u{20AC}", "\u{2014}", "\u{DF}", ",", ".", "?"].randomElement(using: &random)! }
        return word
    }

    static func text(_ random: inout SplitMix64, words: ClosedRange<Int>) -> String {
        var text = ""
        for index in 0..<Int.random(in: words, using: &random) {
            if index > 0 { text += [" ", " ", " ", " ", " ", "  ", "\n", "\n\n"].randomElement(using: &random)! }
            text += word(&random)
        }
        return text
    }

    static func cell(_ random: inout SplitMix64) -> String {
        (0..<Int.random(in: 0...3, using: &random)).map { _ in plainWord(&random) }.joined(separator: " ")
    }

    static func part(_ random: inout SplitMix64) -> AnswerPart {
        switch Int.random(in: 0..<6, using: &random) {
        case 0:
            return .text(text(&random, words: 0...60))
        case 1:
            let items = (0..<Int.random(in: 0...14, using: &random)).map { _ in text(&random, words: 1...12) }
            return .list(title: text(&random, words: 0...5), items: items)
        case 2:
            let count = Int.random(in: 0...9, using: &random)
            let rows = (0..<Int.random(in: 0...12, using: &random)).map { _ in
                (0..<Int.random(in: 0...count, using: &random)).map { _ in cell(&random) }
            }
            return .table(columns: (0..<count).map { _ in cell(&random) }, rows: rows)
        case 3:
            let host = "www.\(plainWord(&random).lowercased()).example"
            return .link(text: Bool.random(using: &random) ? "" : text(&random, words: 1...8), url: "https://\(host)/page")
        case 4:
            return .place(
                name: text(&random, words: 0...6), latitude: Double.random(in: -90...90, using: &random),
                longitude: Double.random(in: -180...180, using: &random))
        default:
            return .number(value: Double.random(in: -1e7...1e7, using: &random), unit: Bool.random(using: &random) ? "" : plainWord(&random))
        }
    }

    static func answer(_ random: inout SplitMix64) -> TypedAnswer {
        TypedAnswer((0..<Int.random(in: 0...4, using: &random)).map { _ in part(&random) })
    }
}
