// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import Foundation
import GlassdAPI
import Testing

/// `[assistant] kind = "susi"` end to end: glassd asks the fake SUSI server, keeps the text form
/// in History, sends the structure as AnswerTyped, and glassctl lays tables and lists out.
@Suite("SUSI.AI as the assistant", .timeLimit(.minutes(3)), .serialized)
struct SusiAssistantTests {
    private func withSusiGlassd(_ body: (World) async throws -> Void) async throws {
        try await World.with { world in
            try await withBackground(
                "/usr/bin/env", ["python3", Paths.fixtures + "/fake_susi.py"], log: world.directory + "/susi.log", firstLine: true
            ) { _, line in
                let url = "http://127.0.0.1:" + (line.split(separator: " ").last.map(String.init) ?? "")
                let config = world.directory + "/susi.conf"
                try "[assistant]\nkind = \"susi\"\nbase_url = \"\(url)\"\ntimeout_seconds = 20\n"
                    .write(toFile: config, atomically: true, encoding: .utf8)
                try await world.withGlassd(config: config) { _ in try await body(world) }
            }
        }
    }

    @Test("a table and a list: laid out by glassctl query, typed on D-Bus (--json), the text form in History")
    func tableAndList() async throws {
        try await withSusiGlassd { world in
            let backend = try await world.busctl(["get-property", GlassdBus.name, GlassdBus.managerPath, GlassdBus.managerInterface, "Backend"])
            #expect(backend.stdout.contains("SUSI.AI at 127.0.0.1"), "\(backend.stdout)")
            let table = try await world.glassctl(["query", "table"])
            #expect(table.ok, "\(table.stderr)")
            #expect(table.stdout == """
                The largest cities:
                Population  City    Country
                ----------  ------  -------
                3645000     Berlin  Germany
                2161000     Paris   France
                3223000     Madrid  Spain

                """, "\(table.stdout)")
            let news = try await world.glassctl(["query", "news"])
            #expect(news.stdout.contains("Here are the headlines:\n1. Rain expected in the north — Bring an umbrella\n2. Bridge reopens"), "\(news.stdout)")

            let json = try await world.glassctl(["query", "--json", "table"])
            let object = try #require(jsonObjects(json.stdout).first)
            #expect(object["kind"] as? String == "table")
            let typed = try #require(object["typed"] as? [String: Any])
            #expect(typed["columns"] as? [String] == ["Population", "City", "Country"])
            #expect(typed["answered_by"] as? String == "susi")
            #expect((typed["parts"] as? [[String: Any]])?.map { $0["kind"] as? String } == ["text", "table"])

            let history = try await world.glassctl(["history", "--json", "-n", "2"])
            let rows = (try? JSONSerialization.jsonObject(with: Data(history.stdout.utf8))) as? [[String: Any]] ?? []
            #expect(rows.last?["text"] as? String == "The largest cities:\nPopulation | City | Country\n3645000 | Berlin | Germany\n2161000 | Paris | France\n3223000 | Madrid | Spain")
        }
    }

    @Test("a plain answer prints as text; a malformed one fails UpstreamFailed; local skills still answer first")
    func textAndFailures() async throws {
        try await withSusiGlassd { world in
            let text = try await world.glassctl(["query", "text"])
            #expect(text.stdout == "Hello, I am SUSI.\n", "\(text.stdout)")
            let malformed = try await world.callManager("Query", "s", ["malformed"])
            #expect(!malformed.ok)
            let skill = try await world.glassctl(["query", "what is 6 times 7"])
            #expect(skill.stdout == "42\n", "\(skill.stdout)")
        }
    }
}
