// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation
import GlassdAPI
import Testing

@Suite("History search, export and import over D-Bus", .timeLimit(.minutes(3)), .serialized)
struct HistoryTests {
    /// glassctl's --json rows, as (role, text).
    private func rows(_ result: CommandResult) throws -> [[String]] {
        let rows = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]]
        return (rows ?? []).map { [$0["role"] as? String ?? "", $0["text"] as? String ?? ""] }
    }

    @Test("SearchHistory ranks matches; a query without words is InvalidArgs; FTS5 syntax is just text")
    func search() async throws {
        try await World.with { world in
            try await world.withGlassd { _ in
                for question in ["Café in Zürich", "zurich weather", "[slow] nothing"] {
                    _ = try await world.callManager("Query", "s", [question])
                }
                let found = try await world.glassctl(["history", "--json", "--search", "ZURICH cafe"])
                #expect(found.ok, "\(found.stderr)")
                // The question and its echoed answer: the shorter one ranks first.
                #expect(try rows(found) == [["user", "Café in Zürich"], ["assistant", "echo: Café in Zürich"]])

                let empty = try await world.callManager("SearchHistory", "su", [" ", "10"])
                #expect(!empty.ok)
                #expect(empty.stderr.contains("The search has no words."))
                let odd = try await world.callManager("SearchHistory", "su", ["\"NEAR( AND *", "10"])
                #expect(odd.ok, "\(odd.stderr)")
                #expect(odd.stdout.contains("\"data\":[[]]"))
            }
        }
    }

    @Test("glassctl exports, a fresh glassd imports the same History, a second import adds nothing")
    func exportImport() async throws {
        try await World.with { world in
            let file = world.directory + "/history.jsonl"
            let before = try await world.withGlassd { _ in
                for question in ["first", "second \"quoted\"", "third 🙂"] {
                    _ = try await world.callManager("Query", "s", [question])
                }
                let exported = try await world.glassctl(["history", "--export", file])
                #expect(exported.ok, "\(exported.stderr)")
                return try await world.glassctl(["history", "--json", "-n", "100"]).stdout
            }
            try await world.withGlassd(stateDirectory: "fresh") { _ in
                let first = try await world.glassctl(["history", "--json", "--import", file])
                #expect(first.stdout == "{\"imported\":6}\n", "\(first.stderr)")
                #expect(try await world.glassctl(["history", "--json", "-n", "100"]).stdout == before)
                let second = try await world.glassctl(["history", "--import", file])
                #expect(second.stdout == "Imported 0 messages.\n")
                #expect(try await world.glassctl(["history", "--json", "-n", "100"]).stdout == before)

                try "{\"created_at\": 1}\nnot json\n".write(toFile: file, atomically: true, encoding: .utf8)
                let bad = try await world.glassctl(["history", "--import", file])
                #expect(!bad.ok)
                #expect(bad.stderr.contains("Line 1: query_id must be a string; nothing was imported."))
                #expect(bad.stderr.contains(GlassdErrorName.invalidArgs))
            }
        }
    }
}
