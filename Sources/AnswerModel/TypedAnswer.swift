// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation

/// One part of an answer, in the form it has: the glasses lay each kind out its own way, D-Bus
/// carries the structure, History keeps the text form.
public enum AnswerPart: Sendable, Equatable {
    case text(String)
    case list(title: String, items: [String])
    /// Rows hold one cell per column (shorter rows are padded with empty cells when shown).
    case table(columns: [String], rows: [[String]])
    case link(text: String, url: String)
    case place(name: String, latitude: Double, longitude: Double)
    case number(value: Double, unit: String)

    /// The kind's name, as AnswerTyped and AnswerOf spell it.
    public var kind: String {
        switch self {
        case .text: "text"
        case .list: "list"
        case .table: "table"
        case .link: "link"
        case .place: "place"
        case .number: "number"
        }
    }

    /// The part as plain text (History, Answered): every item, row and the URL included.
    public var textForm: String {
        switch self {
        case .text(let text):
            return text
        case .list(let title, let items):
            let numbered = items.enumerated().map { "\($0.offset + 1). \($0.element)" }
            return ([title].filter { !$0.isEmpty } + numbered).joined(separator: "\n")
        case .table(let columns, let rows):
            return ([columns] + rows).map { $0.joined(separator: " | ") }.joined(separator: "\n")
        case .link(let text, let url):
            return text.isEmpty ? url : "\(text) (\(url))"
        case .place(let name, let latitude, let longitude):
            return "\(name) (\(AnswerPart.coordinate(latitude)), \(AnswerPart.coordinate(longitude)))"
        case .number(let value, let unit):
            return unit.isEmpty ? AnswerPart.number(value) : "\(AnswerPart.number(value)) \(unit)"
        }
    }

    /// A number as people write it: whole numbers without a fraction, others with up to 6
    /// significant decimals and no trailing zeros.
    public static func number(_ value: Double) -> String {
        guard value.isFinite else { return value.isNaN ? "not a number" : (value < 0 ? "-∞" : "∞") }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        var text = String(format: "%.6f", value)
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text
    }

    /// A coordinate in degrees with 5 decimals (about a metre).
    public static func coordinate(_ degrees: Double) -> String {
        String(format: "%.5f", degrees)
    }
}

/// An answer: its parts in order (a SUSI answer performs several actions; most answers are one
/// text part).
public struct TypedAnswer: Sendable, Equatable {
    public var parts: [AnswerPart]

    public init(_ parts: [AnswerPart]) {
        self.parts = parts
    }

    public static func text(_ text: String) -> TypedAnswer { TypedAnswer([.text(text)]) }

    /// The kind D-Bus names it by: its first part that is not text, else text.
    public var kind: String { (parts.first { $0.kind != "text" } ?? parts.first)?.kind ?? "text" }

    /// The whole answer as plain text, parts on lines of their own.
    public var textForm: String { parts.map(\.textForm).joined(separator: "\n") }
}
