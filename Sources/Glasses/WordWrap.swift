// SPDX-License-Identifier: GPL-2.0-or-later

/// Greedy word wrap for a fixed-width font, counting one column per Character.
enum WordWrap {
    /// `paragraph`'s words on lines of at most `width` characters, lines after the first indented
    /// by `indent` spaces (which count against the width). Runs of whitespace become one space.
    /// A word longer than a whole line is split, starting on the line it reaches, so nothing before
    /// it (a list item's number) is left alone on a line.
    static func lines(_ paragraph: some StringProtocol, width: Int, indent: Int = 0) -> [String] {
        let width = max(1, width)
        let indent = indent < width ? max(0, indent) : 0
        var lines: [String] = []
        var line = ""
        var start: Int { lines.isEmpty ? 0 : indent }
        func breakLine() {
            lines.append(line)
            line = String(repeating: " ", count: indent)
        }
        for found in paragraph.split(whereSeparator: \.isWhitespace) {
            var word = Substring(found)
            let hasContent = line.count > start
            if line.count + (hasContent ? 1 : 0) + word.count <= width {
                if hasContent { line += " " }
                line += word
                continue
            }
            if word.count <= width - indent {
                breakLine()
                line += word
                continue
            }
            // Longer than any line: fill what is left of this one, then whole lines.
            if hasContent {
                if line.count + 2 <= width { line += " " } else { breakLine() }
            }
            while !word.isEmpty {
                let room = width - line.count
                if room <= 0 {
                    breakLine()
                    continue
                }
                line += word.prefix(room)
                word = word.dropFirst(room)
            }
        }
        if line.count > start { lines.append(line) }
        return lines
    }

    /// `text` wrapped paragraph by paragraph; one blank line at most where the text has blank
    /// lines, none at its start or end (they would only cost the small display a line).
    static func paragraphs(_ text: String, width: Int) -> [String] {
        var out: [String] = []
        for paragraph in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline) {
            let wrapped = lines(paragraph, width: width)
            if wrapped.isEmpty {
                if let last = out.last, !last.isEmpty { out.append("") }
            } else {
                out += wrapped
            }
        }
        while out.last?.isEmpty == true { out.removeLast() }
        return out
    }
}
