// SPDX-License-Identifier: GPL-2.0-or-later
import AnswerModel
import Glasses

/// Checks that pages show an answer's whole content in order: whitespace aside (wrapping and
/// alignment change it), the pages' content is the parts' content one after another, except table
/// cells cut with a mark, columns counted in a "+N columns" note, and a table's repeated header.
struct ShownWords {
    let stream: [Character]
    var position = 0
    let layout: AnswerLayout

    static func allShown(_ answer: TypedAnswer, pages lines: [String], layout: AnswerLayout) -> Bool {
        var check = ShownWords(stream: Array(lines.joined().filter { !$0.isWhitespace }), layout: layout)
        return answer.parts.allSatisfy { check.shows($0) } && check.position == check.stream.count
    }

    func stripped(_ text: String) -> [Character] {
        Array((layout.asciiOnly ? DisplayText.ascii(text) : text).filter { !$0.isWhitespace })
    }

    func starts(with token: [Character], at index: Int) -> Bool {
        index + token.count <= stream.count && Array(stream[index..<index + token.count]) == token
    }

    /// Takes `token` when the stream goes on with it.
    mutating func take(_ token: [Character]) -> Bool {
        guard starts(with: token, at: position) else { return false }
        position += token.count
        return true
    }

    mutating func shows(_ part: AnswerPart) -> Bool {
        switch part {
        case .text(let text):
            return take(stripped(text))
        case .list(let title, let items):
            return take(stripped(title) + items.enumerated().flatMap { Array("\($0.offset + 1).") + stripped($0.element) })
        case .table(let columns, let rows):
            return shows(columns: columns, rows: rows)
        case .link(let text, let url):
            return take(text.isEmpty ? Array(url.dropFirst("https://".count).prefix { $0 != "/" }) : stripped(text))
        case .place(let name, let latitude, let longitude):
            return take(stripped(name) + stripped("\(AnswerPart.coordinate(latitude)),\(AnswerPart.coordinate(longitude))"))
        case .number:
            return take(stripped(part.textForm))
        }
    }

    /// A cell whole, or a prefix of it (one character at least) and the cut mark.
    mutating func take(cell: String) -> Bool {
        let token = stripped(cell)
        if take(token) { return true }
        let mark = Array(layout.asciiOnly ? "..." : "\u{2026}")
        for length in stride(from: token.count - 1, through: 1, by: -1) where take(Array(token.prefix(length)) + mark) {
            return true
        }
        return false
    }

    mutating func shows(columns: [String], rows: [[String]]) -> Bool {
        let count = max(columns.count, rows.map(\.count).max() ?? 0)
        var shown = count
        // "+N columns": the columns after the first `count - N` are not shown.
        // (Not the note of a table after this one, when this one shows nothing.)
        let start = position
        if take(["+"]) {
            let digits = stream[position...].prefix { $0.isNumber }
            position += digits.count
            if let dropped = Int(String(digits)), dropped > 0, dropped < count, take(Array(dropped == 1 ? "column" : "columns")) {
                shown = count - dropped
            } else {
                position = start
            }
        }
        func cells(_ row: [String]) -> [String] { Array((row + Array(repeating: "", count: count)).prefix(shown)) }
        let headerStart = position
        guard cells(columns).allSatisfy({ take(cell: $0) }) else { return false }
        let header = Array(stream[headerStart..<position])
        // A row of empty cells shows nothing (not even its header, repeated).
        for row in rows where cells(row).contains(where: { !stripped($0).isEmpty }) {
            // A row that starts a page comes after its header, repeated; tried first, as a row's
            // cells could pass for the header's start (a cell "9" where the header begins "9F").
            let start = position
            if !header.isEmpty, take(header), cells(row).allSatisfy({ take(cell: $0) }) { continue }
            position = start
            guard cells(row).allSatisfy({ take(cell: $0) }) else { return false }
        }
        return true
    }
}
