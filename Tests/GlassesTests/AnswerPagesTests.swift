// SPDX-License-Identifier: GPL-2.0-or-later
import AnswerModel
import Concurrency
import Glasses
import LinkKit
import Testing

@Suite("Typed answers laid out in pages for the display", .timeLimit(.minutes(5)))
struct AnswerPagesTests {
    let monocle = AnswerLayout(columns: 26, lines: 7)

    func pages(_ parts: AnswerPart..., layout: AnswerLayout = AnswerLayout(columns: 26, lines: 7)) -> [String] {
        AnswerPages.pages(TypedAnswer(parts), layout: layout)
    }

    /// The pages' content lines (without the indicator of a multi-page answer).
    static func content(_ pages: [String]) -> [String] {
        let split = pages.map { $0.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) }
        return split.flatMap { pages.count > 1 ? Array($0.dropLast()) : $0 }
    }

    @Test("the Monocle's layout: 26 columns, 7 lines, ASCII only")
    func monocleLayout() {
        #expect(monocle == AnswerLayout(columns: 26, lines: 7, asciiOnly: true))
    }

    @Test("text: words wrapped, paragraphs kept (blank lines collapsed), a long word split, fitted to ASCII")
    func text() {
        #expect(pages(.text("The Eiffel Tower is 330 metres tall and was finished in 1889.\n\n\nIt is in  Paris.")) == [
            "The Eiffel Tower is 330\nmetres tall and was\nfinished in 1889.\n\nIt is in Paris.",
        ])
        #expect(pages(.text("Say Supercalifragilisticexpialidocious")) == ["Say Supercalifragilisticex\npialidocious"])
        #expect(pages(.text("Caf\u{E9} \u{2014} 5 \u{20AC}")) == ["Cafe - 5 EUR"])
        #expect(pages(.text("Caf\u{E9} \u{2014} 5 \u{20AC}"), layout: AnswerLayout(columns: 26, lines: 7, asciiOnly: false)) == ["Caf\u{E9} \u{2014} 5 \u{20AC}"])
    }

    @Test("list: the title, then numbered items with continuation lines aligned after the number")
    func list() {
        let list = AnswerPart.list(title: "Largest cities", items: ["Tokyo", "Delhi, the capital territory of India", "Shanghai"])
        #expect(pages(list) == ["Largest cities\n1. Tokyo\n2. Delhi, the capital\n   territory of India\n3. Shanghai"])
        // A word too long for the line starts after the number rather than leaving it alone.
        #expect(pages(.list(title: "", items: [String(repeating: "x", count: 30)])) == ["1. " + String(repeating: "x", count: 23) + "\n   xxxxxxx"])
    }

    @Test("table: header and rows, columns as wide as their widest cell, short rows padded")
    func table() {
        let table = AnswerPart.table(columns: ["City", "Population"], rows: [["Tokyo", "37.4M"], ["Delhi", "31.0M"], ["Shanghai"]])
        #expect(pages(table) == ["City     Population\nTokyo    37.4M\nDelhi    31.0M\nShanghai"])
    }

    @Test("link: its text only, or the URL's host; place: name and coordinates; number: value and unit")
    func linkPlaceNumber() {
        #expect(pages(.link(text: "Eiffel Tower on Wikipedia", url: "https://en.wikipedia.org/wiki/Eiffel_Tower")) == ["Eiffel Tower on Wikipedia"])
        #expect(pages(.link(text: "", url: "https://www.toureiffel.paris/en")) == ["www.toureiffel.paris"])
        #expect(pages(.place(name: "Eiffel Tower", latitude: 48.858370, longitude: 2.294481)) == ["Eiffel Tower\n48.85837, 2.29448"])
        #expect(pages(.number(value: 391, unit: "")) == ["391"])
        #expect(pages(.number(value: 8.047, unit: "km")) == ["8.047 km"])
        // Parts each start on a line of their own.
        #expect(pages(.text("Height:"), .number(value: 330, unit: "m")) == ["Height:\n330 m"])
    }

    @Test("empty answers have no pages")
    func empty() {
        #expect(AnswerPages.pages(TypedAnswer([]), layout: monocle) == [])
        #expect(pages(.text(""), .text(" \n\n "), .list(title: "", items: []), .table(columns: [], rows: [])) == [])
    }

    @Test("a long text in pages \"1/3\"..\"3/3\" of 6 lines and the indicator, right-aligned; no word lost")
    func longText() {
        let text = "The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris, France. "
            + "It is named after the engineer Gustave Eiffel, whose company designed and built the tower from 1887 to 1889. "
            + "Locally nicknamed La dame de fer, it was constructed as the centrepiece of the 1889 World's Fair, "
            + "and to crown the centennial anniversary of the French Revolution."
        let pages = pages(.text(text))
        #expect(pages.count == 3)
        for (number, page) in pages.enumerated() {
            let lines = page.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            #expect(lines.count == 7)
            #expect(lines.last == String(repeating: " ", count: 23) + "\(number + 1)/3")
            #expect(lines.allSatisfy { $0.count <= 26 })
        }
        #expect(Self.content(pages).joined(separator: " ").split(separator: " ") == text.split(separator: " "))
    }

    @Test("a long list: items numbered across pages, a title not left alone at the bottom of a page")
    func longList() {
        let items = (1...12).map { "Step \($0): turn the dial until it clicks" }
        let five = "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen"
        let pages = pages(.text(five), .list(title: "How to", items: items))
        let content = Self.content(pages)
        // The text fills 5 of page 1's 6 lines: the title goes to page 2, with its first item.
        #expect(pages[0].split(separator: "\n", omittingEmptySubsequences: false).prefix(6) == ["one two three four five", "six seven eight nine ten", "eleven twelve thirteen", "fourteen fifteen sixteen", "seventeen eighteen", ""])
        #expect(pages[1].hasPrefix("How to\n1. Step 1: turn the dial\n   until it clicks\n"))
        let numbered = content.filter { $0.first?.isNumber == true }
        #expect(numbered == items.enumerated().map { "\($0.offset + 1). Step \($0.offset + 1): turn the dial" })
        #expect(pages.last?.hasSuffix("\(pages.count)/\(pages.count)") == true)
    }

    @Test("a list title longer than a page fills its pages rather than moving line by line")
    func longTitle() {
        let title = "one two three four five six seven eight nine ten"
        // Only its last line goes on with the first item.
        #expect(pages(.list(title: title, items: ["last"]), layout: AnswerLayout(columns: 10, lines: 3)) == [
            "one two\nthree four\n       1/4", "five six\nseven\n       2/4", "eight nine\n\n       3/4", "ten\n1. last\n       4/4",
        ])
    }

    static let menu = AnswerPart.table(
        columns: ["Dish", "Description", "Price"],
        rows: [
            ["Soup", "Tomato soup with basil", "6.50"], ["Salad", "Green salad", "7.00"],
            ["Quiche", "Leek and bacon quiche", "9.50"], ["Steak", "Grilled steak with fries", "18.00"],
            ["Tart", "Apple tart", "5.00"], ["Cheese", "Three cheeses of the day", "8.00"], ["Coffee", "Espresso"],
        ])

    @Test("a wide table: the widest column shrunk, its long cells cut with \"…\", the header repeated on each page")
    func wideTable() {
        #expect(pages(Self.menu, layout: AnswerLayout(columns: 26, lines: 7, asciiOnly: false)) == [
            """
            Dish   Description   Price
            Soup   Tomato soup … 6.50
            Salad  Green salad   7.00
            Quiche Leek and bac… 9.50
            Steak  Grilled stea… 18.00
            Tart   Apple tart    5.00
                                   1/2
            """,
            """
            Dish   Description   Price
            Cheese Three cheese… 8.00
            Coffee Espresso



                                   2/2
            """,
        ])
        // The Monocle's font has no "…": the cut is spelled as DisplayText spells it.
        #expect(pages(Self.menu)[0].contains("Quiche Leek and b... 9.50"))
    }

    @Test("a table header is not left alone at the bottom of a page")
    func headerNotAlone() {
        let five = "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen"
        let pages = pages(.text(five), Self.menu)
        #expect(pages[1].hasPrefix("Dish   Description   Price\nSoup "))
        #expect(!pages[0].contains("Dish"))
    }

    @Test("a table with more columns than fit: the first that fit, and a note of how many more")
    func tooManyColumns() {
        let columns = (0..<10).map { String(UnicodeScalar(UInt8(65 + $0))) }
        let rows = [(1...10).map { String($0 * 100) }]
        #expect(pages(.table(columns: columns, rows: rows)) == ["+4 columns\nA   B   C   D   E   F\n100 200 300 400 500 600"])
    }

    @Test("random answers: pages within the layout, indicators in order, every word shown but in cut table cells")
    func randomAnswers() async {
        var random = SplitMix64(seed: 2026)
        for round in 0..<600 {
            let answer = RandomAnswers.answer(&random)
            let layout = AnswerLayout(
                columns: Int.random(in: 10...40, using: &random), lines: Int.random(in: 2...9, using: &random),
                asciiOnly: Bool.random(using: &random))
            let pages = AnswerPages.pages(answer, layout: layout)
            for (number, page) in pages.enumerated() {
                let lines = page.split(separator: "\n", omittingEmptySubsequences: false)
                #expect(lines.count <= layout.lines, "round \(round)")
                #expect(lines.allSatisfy { $0.count <= layout.columns }, "round \(round)")
                if pages.count > 1 {
                    #expect(lines.count == layout.lines && String(lines.last?.drop(while: \.isWhitespace) ?? "") == "\(number + 1)/\(pages.count)", "round \(round)")
                }
            }
            #expect(ShownWords.allShown(answer, pages: Self.content(pages), layout: layout), "round \(round): \(answer)")
            await Task.yield()  // a second of work: the pool's other tests go on meanwhile
        }
    }
}
