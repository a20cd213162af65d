// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation

extension AnswerPart {
    /// The part as a voice says it: sentences, no URLs, coordinates or column bars (the display
    /// and History have those). A list's items and a table's rows become sentences of their own,
    /// so the speaker paces them.
    public var spokenForm: String {
        switch self {
        case .text(let text):
            return text
        case .list(let title, let items):
            return ([title].filter { !$0.isEmpty } + items).map(Self.sentence).joined(separator: " ")
        case .table(let columns, let rows):
            return rows.map { row in
                let cells = row.enumerated().compactMap { index, cell -> String? in
                    guard !cell.isEmpty else { return nil }
                    let column = index < columns.count ? columns[index] : ""
                    return column.isEmpty ? cell : "\(column) \(cell)"
                }
                return Self.sentence(cells.joined(separator: ", "))
            }.filter { $0 != "." }.joined(separator: " ")
        case .link(let text, let url):
            guard text.isEmpty else { return text }
            return URL(string: url)?.host.map { "A link to \($0)." } ?? "A link."
        case .place(let name, _, _):
            return name
        case .number:
            return textForm
        }
    }

    /// `text` ending as a sentence.
    static func sentence(_ text: String) -> String {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let last = trimmed.last else { return "." }
        return ".!?:;".contains(last) ? trimmed : trimmed + "."
    }
}

extension TypedAnswer {
    /// The whole answer as a voice says it, parts on lines of their own.
    public var spokenForm: String { parts.map(\.spokenForm).joined(separator: "\n") }
}
