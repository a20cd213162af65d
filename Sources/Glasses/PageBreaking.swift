// SPDX-License-Identifier: GPL-2.0-or-later

/// A laid-out line and what breaking pages must respect about it.
struct PageLine: Equatable {
    var text: String
    /// A title, a table's header or note: not left alone at the bottom of a page.
    var keepWithNext = false
    /// A table row's header line, repeated at the top of a page the row starts.
    var header: String?

    init(_ text: String, keepWithNext: Bool = false, header: String? = nil) {
        self.text = text
        self.keepWithNext = keepWithNext
        self.header = header
    }
}

/// Splits laid-out lines into pages of a given number of lines.
enum PageBreaking {
    static func pages(_ lines: [PageLine], capacity: Int) -> [[String]] {
        let capacity = max(1, capacity)
        var pages: [[String]] = []
        var page: [String] = []
        // Lines of the answer on this page, not counting a repeated header.
        var own = 0
        var index = 0
        func finishPage() {
            while page.last?.isEmpty == true { page.removeLast() }
            pages.append(page)
            page = []
            own = 0
        }
        while index < lines.count {
            let line = lines[index]
            // A blank line only separates paragraphs: at the top of a page it would waste a line.
            if own == 0 && line.text.isEmpty {
                index += 1
                continue
            }
            if page.isEmpty, let header = line.header, capacity > 1 { page.append(header) }
            // Lines kept together go to the next page, unless they would not fit there either.
            let together = chain(lines, from: index)
            if own > 0 && together > capacity - page.count && together <= capacity {
                finishPage()
                continue
            }
            page.append(line.text)
            own += 1
            index += 1
            if page.count == capacity { finishPage() }
        }
        if own > 0 { finishPage() }
        return pages
    }

    /// How many lines must go on one page from `index`: it and those it keeps with.
    private static func chain(_ lines: [PageLine], from index: Int) -> Int {
        var end = index
        while end < lines.count - 1 && lines[end].keepWithNext { end += 1 }
        return end - index + 1
    }
}
