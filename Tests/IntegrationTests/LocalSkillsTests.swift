// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import Foundation
import GlassdAPI
import Testing

/// Local skills end to end: glassd answers them itself, before (and without) any server, keeps
/// them in History marked as its skill's, and carries their structure on D-Bus.
@Suite("Local skills", .timeLimit(.minutes(5)), .serialized)
struct LocalSkillsTests {
    private func query(_ world: World, _ text: String) async throws -> String {
        let result = try await world.callManager("Query", "s", [text])
        guard result.ok, let answer = busctlString(result) else { throw TestFailure("Query \(text): \(result.stderr)") }
        return answer
    }

    /// AnswerOf's (kind, answer) as busctl's JSON gives them.
    private func answerOf(_ world: World, _ id: String) async throws -> (String, [String: Any]) {
        let result = try await world.busctl(
            ["--json=short", "call", GlassdBus.name, GlassdBus.managerPath, GlassdBus.managerInterface, GlassdBus.Method.answerOf, "s", id])
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        let data = object?["data"] as? [Any] ?? []
        guard data.count == 2, let kind = data[0] as? String, let fields = data[1] as? [String: Any] else {
            throw TestFailure("AnswerOf \(id): \(result.stdout) \(result.stderr)")
        }
        // busctl's JSON gives each variant as {"type": …, "data": …}.
        return (kind, fields.mapValues { ($0 as? [String: Any])?["data"] ?? $0 })
    }

    @Test("with no server configured: arithmetic, conversion and repeat are answered, kept in History, typed on D-Bus")
    func withoutServer() async throws {
        try await World.with { world in
            try await world.withGlassd(config: try world.writeConfig(baseURL: .some(nil))) { _ in
                let bus = try await world.connect()
                let typed = try await bus.signals(SignalMatch(interface: GlassdBus.managerInterface, member: GlassdBus.Signal.answerTyped))
                #expect(try await query(world, "What is 17 times 23?") == "391")
                var iterator = typed.makeAsyncIterator()
                let signal = try #require(await iterator.next())
                #expect(signal.arguments[1].string == "number")
                #expect(try await query(world, "convert 5 miles to km") == "8.047 km")
                #expect(try await query(world, "what did I just ask") == "You asked: convert 5 miles to km")
                // A question no skill takes still needs the server.
                let refused = try await world.callManager("Query", "s", ["Who wrote Hamlet?"])
                #expect(!refused.ok && refused.stderr.contains("base_url"), "\(refused.stderr)")

                let history = try await world.glassctl(["history", "--json", "-n", "6"])
                let rows = (try? JSONSerialization.jsonObject(with: Data(history.stdout.utf8))) as? [[String: Any]] ?? []
                #expect(rows.map { $0["text"] as? String } == [
                    "What is 17 times 23?", "391", "convert 5 miles to km", "8.047 km", "what did I just ask",
                    "You asked: convert 5 miles to km",
                ], "\(history.stdout)")
                let id = try #require(rows.first?["query_id"] as? String)
                let (kind, fields) = try await answerOf(world, id)
                #expect(kind == "number")
                #expect(fields["value"] as? Double == 391)
                #expect(fields["answered_by"] as? String == "skill:arithmetic")
                #expect(fields["text_form"] as? String == "391")
                await bus.close()
            }
        }
    }

    @Test("skills reach no server; a near miss goes to the model, whose answer AnswerOf gives as text; disabled skills go to the model")
    func nearMissesAndDisabled() async throws {
        try await World.with { world in
            try await world.withGlassd { _ in
                _ = try await query(world, "what is 2 plus 2")
                _ = try await query(world, "how many feet in 3 meters")
                #expect(try await world.serverRequests().isEmpty, "a skill's question reached the server")
                let answer = try await query(world, "what time did the train leave yesterday")
                #expect(try await world.serverRequests().count == 1)
                let history = try await world.glassctl(["history", "--json", "-n", "1"])
                let rows = (try? JSONSerialization.jsonObject(with: Data(history.stdout.utf8))) as? [[String: Any]] ?? []
                let id = try #require(rows.last?["query_id"] as? String)
                let (kind, fields) = try await answerOf(world, id)
                #expect(kind == "text" && fields["text"] as? String == answer)
                #expect(fields["answered_by"] as? String == "")
                let missing = try await world.busctl(
                    ["call", GlassdBus.name, GlassdBus.managerPath, GlassdBus.managerInterface, GlassdBus.Method.answerOf, "s", "nope"])
                #expect(!missing.ok && missing.stderr.contains("No answer is kept"), "\(missing.stderr)")
            }
            let config = try world.writeConfig()
            try (try String(contentsOfFile: config, encoding: .utf8) + "[skills]\nenabled = [\"arithmetic\"]\n")
                .write(toFile: config, atomically: true, encoding: .utf8)
            try await world.withGlassd(config: config, stateDirectory: "state2") { _ in
                let before = try await world.serverRequests().count
                _ = try await query(world, "what time is it")
                #expect(try await world.serverRequests().count == before + 1, "a disabled skill answered")
            }
        }
    }

    @Test("the time and date in glassd's zone, against the test's clock")
    func timeInZone() async throws {
        try await World.with { world in
            try await world.withGlassd(environment: ["TZ": "Asia/Kolkata"]) { _ in
                var calendar = Calendar(identifier: .gregorian)
                calendar.timeZone = try #require(TimeZone(identifier: "Asia/Kolkata"))
                func said(_ date: Date) -> String {
                    let parts = calendar.dateComponents([.hour, .minute], from: date)
                    return String(format: "It is %02d:%02d.", parts.hour ?? 0, parts.minute ?? 0)
                }
                let before = Date()
                let answer = try await query(world, "what time is it")
                let after = Date()
                #expect([said(before), said(after)].contains(answer), "\(answer)")
                let date = try await query(world, "what's the date")
                #expect(date.hasPrefix("Today is ") && date.contains("\(calendar.component(.year, from: after))"), "\(date)")
            }
        }
    }
}
