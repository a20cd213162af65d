// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation
import GlassdAPI
import Testing

/// The `show_answer` tool end to end: glassd offers it to the (fake) OpenAI-compatible server, a
/// call of it becomes a typed answer (laid out by glassctl, typed on D-Bus, its text form in
/// History), and a server that refuses tools is asked again without them, and from then on.
@Suite("The show_answer tool", .timeLimit(.minutes(3)), .serialized)
struct ShowAnswerToolTests {
    @Test("a table the model shows with the tool: laid out by glassctl, typed on D-Bus, its text form in History")
    func table() async throws {
        try await World.with { world in
            try await world.withGlassd { _ in
                let table = try await world.glassctl(["query", "[table] the largest cities of Norway"])
                #expect(table.ok, "\(table.stderr)")
                #expect(table.stdout == "City    Population\n------  ----------\nOslo    709000\nBergen  291000\n", "\(table.stdout)")
                let request = try #require(try await world.serverRequests().last)
                let body = try #require(request["body"] as? [String: Any])
                #expect((body["tools"] as? [[String: Any]])?.first.flatMap { ($0["function"] as? [String: Any])?["name"] as? String }
                    == "show_answer")

                let json = try await world.glassctl(["query", "--json", "[list] the inner planets"])
                let object = try #require(jsonObjects(json.stdout).first)
                #expect(object["kind"] as? String == "list")
                let typed = try #require(object["typed"] as? [String: Any])
                #expect(typed["items"] as? [String] == ["Mercury", "Venus", "Earth"])
                #expect(typed["answered_by"] as? String == "")

                let history = try await world.glassctl(["history", "--json", "-n", "4"])
                let rows = (try? JSONSerialization.jsonObject(with: Data(history.stdout.utf8))) as? [[String: Any]] ?? []
                #expect(rows.map { $0["text"] as? String }[1] == "City | Population\nOslo | 709000\nBergen | 291000", "\(history.stdout)")
            }
        }
    }

    @Test("a server that refuses tools is asked again without them at once, and not offered them again; off in the config, never offered")
    func refusedAndOff() async throws {
        try await World.with { world in
            try await world.withGlassd { _ in
                let answer = try await world.callManager("Query", "s", ["[notools] hello"])
                #expect(answer.ok, "\(answer.stderr)")
                _ = try await world.callManager("Query", "s", ["what is the tallest mountain"])
                let offered = try await world.serverRequests().map { ($0["body"] as? [String: Any])?["tools"] != nil }
                #expect(offered == [true, false, false], "\(offered)")
            }
            let config = try world.writeConfig()
            let text = try String(contentsOfFile: config, encoding: .utf8)
                .replacingOccurrences(of: "[assistant]\n", with: "[assistant]\nshow_answer_tool = false\n")
            try text.write(toFile: config, atomically: true, encoding: .utf8)
            try await world.withGlassd(config: config, stateDirectory: "state2") { _ in
                let before = try await world.serverRequests().count
                let plain = try await world.glassctl(["query", "[table] cities"])
                #expect(plain.stdout.hasPrefix("echo: [table] cities"), "\(plain.stdout)")
                let requests = try await world.serverRequests().dropFirst(before)
                #expect(requests.allSatisfy { ($0["body"] as? [String: Any])?["tools"] == nil })
            }
        }
    }
}
