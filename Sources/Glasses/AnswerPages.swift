// SPDX-License-Identifier: GPL-2.0-or-later
import AnswerModel
import Foundation

/// The text area of a glasses display, in characters of its fixed-width font.
public struct AnswerLayout: Sendable, Equatable {
    public var columns: Int
    /// Lines on a page; on a page of a multi-page answer the last one holds the indicator ("2/3").
    public var lines: Int
    /// The font has glyphs for printable ASCII only (the Monocle's, the Frame's): text is
    /// transliterated with `DisplayText.ascii` before it is measured, and a cut is spelled "...".
    public var asciiOnly: Bool

    /// At least one column and one line.
    public init(columns: Int, lines: Int, asciiOnly: Bool = true) {
        self.columns = max(1, columns)
        self.lines = max(1, lines)
        self.asciiOnly = asciiOnly
    }

    /// How a cut table cell ends.
    var cutMark: String { asciiOnly ? DisplayText.ascii("\u{2026}") : "\u{2026}" }

    func fit(_ text: String) -> String { asciiOnly ? DisplayText.ascii(text) : text }
}

/// A typed answer laid out for the glasses' display, each kind its own way, in pages.
public enum AnswerPages {
    /// The answer as pages of at most `layout.lines` lines of at most `layout.columns` characters
    /// each, a page's lines joined with "\n"; none when the answer shows nothing. Nothing is
    /// dropped but a link's URL (when it has text), table cells cut with a mark and table columns
    /// that do not fit (counted in a note).
    public static func pages(_ answer: TypedAnswer, layout: AnswerLayout) -> [String] {
        var content = answer.parts.flatMap { lines(of: $0, layout: layout) }
        // Blank lines separate paragraphs; at the answer's edges they only cost a line.
        while content.first?.text.isEmpty == true { content.removeFirst() }
        while content.last?.text.isEmpty == true { content.removeLast() }
        guard !content.isEmpty else { return [] }
        if content.count <= layout.lines { return [content.map(\.text).joined(separator: "\n")] }
        // One line is too few for content and an indicator: then the pages go without one.
        guard layout.lines > 1 else { return PageBreaking.pages(content, capacity: 1).map { $0.joined(separator: "\n") } }

        let pages = PageBreaking.pages(content, capacity: layout.lines - 1)
        return pages.enumerated().map { number, page in
            // The indicator on the last line, wherever the page's content ends.
            let indicator = String("\(number + 1)/\(pages.count)".suffix(layout.columns))
            let filler = Array(repeating: "", count: layout.lines - 1 - page.count)
            let right = String(repeating: " ", count: layout.columns - indicator.count) + indicator
            return (page + filler + [right]).joined(separator: "\n")
        }
    }

    static func lines(of part: AnswerPart, layout: AnswerLayout) -> [PageLine] {
        let width = layout.columns
        func wrapped(_ text: String) -> [PageLine] {
            WordWrap.paragraphs(layout.fit(text), width: width).map { PageLine($0) }
        }
        switch part {
        case .text(let text):
            return wrapped(text)
        case .list(let title, let items):
            var out = wrapped(title)
            if !items.isEmpty { out.indices.forEach { out[$0].keepWithNext = true } }
            for (offset, item) in items.enumerated() {
                // The number is the first word, so it stays on the item's first line; the item's
                // own lines are one paragraph, aligned after it.
                let number = "\(offset + 1)."
                let words = layout.fit(item).split(whereSeparator: \.isWhitespace).joined(separator: " ")
                out += WordWrap.lines(number + " " + words, width: width, indent: number.count + 1).map { PageLine($0) }
            }
            return out
        case .table(let columns, let rows):
            return TableLayout.lines(
                columns: columns.map(layout.fit), rows: rows.map { $0.map(layout.fit) }, width: width, cutMark: layout.cutMark)
        case .link(let text, let url):
            // The glasses cannot open a URL; its host says where the link goes when the text does not.
            let shown = text.isEmpty ? (URLComponents(string: url)?.host ?? url) : text
            return wrapped(shown.isEmpty ? url : shown)
        case .place(let name, let latitude, let longitude):
            return wrapped(name) + wrapped("\(AnswerPart.coordinate(latitude)), \(AnswerPart.coordinate(longitude))")
        case .number:
            return wrapped(part.textForm)
        }
    }
}

extension AnswerPages {
    /// The pages as the glasses take them: in the display's font, a form feed between pages, in
    /// pieces of at most `limit` characters (one message each; the text is ASCII, a byte each).
    public static func wire(_ pages: [String], limit: Int) -> [String] {
        let text = Array(pages.map(DisplayText.ascii).joined(separator: "\u{0C}"))
        return stride(from: 0, to: text.count, by: max(1, limit)).map { String(text[$0..<min($0 + max(1, limit), text.count)]) }
    }
}
