// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation
import Product
import Testing

@Suite("Cutting a streamed answer into sentences to speak", .timeLimit(.minutes(5)))
struct SentenceSplitterTests {
    /// Every way of cutting `text` into two pieces gives the same sentences as feeding it whole.
    private func sentences(_ pieces: [String], longest: Int = 200) -> [String] {
        var splitter = SentenceSplitter(longest: longest)
        var out = pieces.flatMap { splitter.feed($0) }
        if let rest = splitter.finish() { out.append(rest) }
        return out
    }

    @Test(
        "sentence ends, and what is not one",
        arguments: [
            ("Paris is the capital. It is in France!", ["Paris is the capital.", "It is in France!"]),
            ("Is it? Yes; it is.", ["Is it?", "Yes;", "it is."]),
            ("It costs 3.5 euros. Cheap.", ["It costs 3.5 euros.", "Cheap."]),
            ("Ask Dr. Smith, e.g. today. Then rest.", ["Ask Dr. Smith, e.g. today.", "Then rest."]),
            ("J. R. R. Tolkien wrote it. Read it.", ["J. R. R. Tolkien wrote it.", "Read it."]),
            ("Steps:\n1. Boil water.\n2. Add tea.", ["Steps:", "1. Boil water.", "2. Add tea."]),
            ("He said \"go.\" Then left.", ["He said \"go.\"", "Then left."]),
            ("**Note.** Done", ["**Note.**", "Done"]),
            ("東京です。大きい！", ["東京です。", "大きい！"]),
            ("In 2024. Then 2025.", ["In 2024.", "Then 2025."]),
            ("no end here", ["no end here"]),
            ("", []),
        ])
    func table(_ text: String, _ expected: [String]) {
        #expect(sentences([text]) == expected)
        for cut in 0...text.count {
            let i = text.index(text.startIndex, offsetBy: cut)
            #expect(sentences([String(text[..<i]), String(text[i...])]) == expected, "cut at \(cut)")
        }
    }

    @Test("a sentence is given as soon as it ends, before the answer is complete; a stop with nothing after it waits for the next piece")
    func streaming() {
        var splitter = SentenceSplitter()
        #expect(splitter.feed("The first").isEmpty)
        #expect(splitter.feed(" one.").isEmpty, "a period at the end of what came may be a decimal point or an initial")
        #expect(splitter.feed(" The") == ["The first one."])
        #expect(splitter.feed(" second is longer, and").isEmpty)
        #expect(splitter.finish() == "The second is longer, and")
        #expect(splitter.finish() == nil)
    }

    @Test("a run with no end is cut at its last comma, else its last space, never after more than the longest")
    func longRun() {
        let clause = "word word word word, "
        let text = String(repeating: clause, count: 10) + "end"
        let out = sentences([text], longest: 50)
        #expect(out.count > 2)
        #expect(out.dropLast().allSatisfy { $0.count <= 50 && $0.hasSuffix(",") }, "\(out)")
        #expect(out.joined(separator: " ") == text.trimmingCharacters(in: .whitespaces))
        let spaces = String(repeating: "abc ", count: 40)
        let cutAtSpaces = sentences([spaces], longest: 30)
        #expect(cutAtSpaces.allSatisfy { $0.count <= 30 && !$0.contains("  ") }, "\(cutAtSpaces)")
        #expect(cutAtSpaces.joined(separator: " ") == spaces.trimmingCharacters(in: .whitespaces))
        let unbroken = String(repeating: "x", count: 70)
        #expect(sentences([unbroken], longest: 30).map(\.count) == [30, 30, 10])
    }
}
