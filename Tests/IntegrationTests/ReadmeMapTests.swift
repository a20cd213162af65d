// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation
import Testing

@Suite("The README's map of the code", .timeLimit(.minutes(5)))
struct ReadmeMapTests {
    /// The README's Layout block: the first fenced block after "## Layout".
    private func layout() throws -> String {
        let readme = try String(contentsOfFile: Paths.root + "/README.md", encoding: .utf8)
        let heading = try #require(readme.range(of: "\n## Layout\n"), "the README has no Layout section")
        let open = try #require(readme.range(of: "```\n", range: heading.upperBound..<readme.endIndex))
        let close = try #require(readme.range(of: "```", range: open.upperBound..<readme.endIndex))
        return String(readme[open.upperBound..<close.lowerBound])
    }

    /// The names in the map's left column: a line's text before its first run of two spaces (a
    /// line that starts with ten spaces or more continues a description).
    private func leftColumn(_ line: Substring) -> [String] {
        guard !line.hasPrefix(String(repeating: " ", count: 10)) else { return [] }
        let text = line.drop { $0 == " " }
        let left = text.range(of: "  ").map { text[..<$0.lowerBound] } ?? text
        return left.split(whereSeparator: { ", ".contains($0) }).map(String.init)
    }

    private func mapped(_ block: String) -> Set<String> {
        Set(block.split(separator: "\n").flatMap(leftColumn).map { String($0.split(separator: "/").last ?? Substring($0)) })
    }

    @Test("every folder of Sources is in the map, and every Sources/ folder the map names exists")
    func everyTarget() throws {
        let block = try layout()
        let folders = try FileManager.default.contentsOfDirectory(atPath: Paths.root + "/Sources").filter { !$0.hasPrefix(".") }
        let names = mapped(block)
        let missing = folders.filter { !names.contains($0) }.sorted()
        #expect(missing.isEmpty, "folders of Sources the README's map leaves out: \(missing)")
        for line in block.split(separator: "\n") where line.hasPrefix("Sources/") {
            let first = leftColumn(line).first ?? ""
            #expect(FileManager.default.fileExists(atPath: Paths.root + "/" + first), "the map names \(first), which is not there")
        }
    }
}
