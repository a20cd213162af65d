// SPDX-License-Identifier: GPL-2.0-or-later

/// A table fitted to the display's width: columns aligned, the widest shrunk first, cut cells
/// marked, columns that cannot fit at all dropped and counted in a note.
enum TableLayout {
    static func lines(columns: [String], rows: [[String]], width: Int, cutMark: String) -> [PageLine] {
        let count = max(columns.count, rows.map(\.count).max() ?? 0)
        guard count > 0 else { return [] }
        // A cell is one line on the display; short rows padded.
        func padded(_ row: [String]) -> [String] {
            row.map { $0.split(whereSeparator: \.isNewline).joined(separator: " ") }
                + Array(repeating: "", count: count - row.count)
        }
        let header = padded(columns)
        let body = rows.map(padded)
        let hasHeader = header.contains { !$0.isEmpty }
        let all = (hasHeader ? [header] : []) + body

        var widths = (0..<count).map { column in max(1, all.map { $0[column].count }.max() ?? 0) }
        // Narrower than this, a cut cell would show little but its mark.
        let minimum = max(3, cutMark.count + 1)
        let floors = widths.map { min($0, minimum, width) }
        var kept = 1
        while kept < count && floors[0...kept].reduce(0, +) + kept <= width { kept += 1 }
        widths = Array(widths.prefix(kept))
        while widths.reduce(0, +) + kept - 1 > width {
            // The widest column that can still give, the leftmost of equals.
            guard let widest = widths.indices.filter({ widths[$0] > floors[$0] }).max(by: { widths[$0] < widths[$1] })
            else { break }
            widths[widest] -= 1
        }

        func line(_ row: [String]) -> String {
            var cells: [String] = []
            for (column, width) in widths.enumerated() {
                let cell = row[column]
                if cell.count > width {
                    cells.append(String((cell.prefix(max(0, width - cutMark.count)) + cutMark).prefix(width)))
                } else {
                    cells.append(cell + String(repeating: " ", count: width - cell.count))
                }
            }
            var text = cells.joined(separator: " ")
            while text.last == " " { text.removeLast() }
            return text
        }

        var out: [PageLine] = []
        if kept < count {
            let note = "+\(count - kept) column" + (count - kept == 1 ? "" : "s")
            out += WordWrap.lines(note, width: width).map { PageLine($0, keepWithNext: true) }
        }
        let headerLine = hasHeader ? line(header) : nil
        if let headerLine { out.append(PageLine(headerLine, keepWithNext: true)) }
        out += body.map { PageLine(line($0), header: headerLine) }
        return out
    }
}
