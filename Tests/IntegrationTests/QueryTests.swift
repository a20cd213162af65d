// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import Foundation
import GlassdAPI
import Testing

@Suite("Query over D-Bus", .timeLimit(.minutes(3)), .serialized)
struct QueryTests {
    @Test("Query answers, AnswerDelta pieces arrive in order, Answered follows")
    func answerAndDeltas() async throws {
        try await World.with { world in
            try await world.withGlassd { _ in
                let bus = try await world.connect()
                let signals = try await bus.signals(SignalMatch(interface: GlassdBus.managerInterface))
                let result = try await world.callManager("Query", "s", ["what is the tallest mountain"])
                #expect(result.ok, "\(result.stderr)")
                #expect(busctlString(result) == "echo: what is the tallest mountain")

                var pieces: [String] = []
                var answered: [DBusValue] = []
                for await signal in signals {
                    if signal.member == GlassdBus.Signal.answerDelta {
                        pieces.append(signal.arguments[1].string ?? "")
                    } else if signal.member == GlassdBus.Signal.answered {
                        answered = signal.arguments
                        break
                    }
                }
                // The fake server streams five characters at a time.
                #expect(pieces == ["echo:", " what", " is t", "he ta", "llest", " moun", "tain"])
                try #require(answered.count == 3)
                #expect(answered[1].string == "what is the tallest mountain")
                #expect(answered[2].string == "echo: what is the tallest mountain")
                #expect(answered[0].string?.hasPrefix(":") == true)
                await bus.close()
            }
        }
    }

    @Test("glassctl query prints the streamed answer; --json gives pure JSON")
    func glassctlQuery() async throws {
        try await World.with { world in
            try await world.withGlassd { _ in
                let plain = try await world.glassctl(["query", "hello", "glasses"])
                #expect(plain.ok, "\(plain.stderr)")
                #expect(plain.stdout == "echo: hello glasses\n")

                let json = try await world.glassctl(["query", "--json", "second"])
                #expect(json.ok)
                let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
                #expect(object?["answer"] as? String == "echo: second")
                #expect((object?["query_id"] as? String)?.isEmpty == false)
            }
        }
    }

    @Test("history is sent as context and kept in SQLite, oldest first")
    func historyAsContext() async throws {
        try await World.with { world in
            try await world.withGlassd { _ in
                _ = try await world.callManager("Query", "s", ["first question"])
                _ = try await world.callManager("Query", "s", ["second question"])
                let requests = try await world.serverRequests()
                let last = try #require(requests.last?["body"] as? [String: Any])
                let messages = try #require(last["messages"] as? [[String: Any]])
                #expect(messages.map { $0["role"] as? String } == ["system", "user", "assistant", "user"])
                #expect(messages[1]["content"] as? String == "first question")
                #expect(messages[2]["content"] as? String == "echo: first question")
                #expect(last["stream"] as? Bool == true)
                #expect(last["model"] as? String == "fake-model")

                let history = try await world.glassctl(["history", "--json", "-n", "3"])
                let rows = try JSONSerialization.jsonObject(with: Data(history.stdout.utf8)) as? [[String: Any]]
                #expect(rows?.map { $0["text"] as? String } == ["echo: first question", "second question", "echo: second question"])
                #expect(rows?.map { $0["role"] as? String } == ["assistant", "user", "assistant"])

                let cleared = try await world.callManager("ClearHistory")
                #expect(cleared.ok)
                let empty = try await world.callManager("History", "u", ["10"])
                #expect(empty.stdout.contains("\"data\":[[]]"))
            }
        }
    }

    @Test("a small history budget drops the oldest turns, not the whole conversation")
    func historyBudget() async throws {
        try await World.with { world in
            // Each turn here is 2 + 8 characters ("qN", "echo: qN"): 25 fits two turns.
            let config = try world.writeConfig(historyBudget: 25)
            try await world.withGlassd(config: config) { _ in
                for question in ["q1", "q2", "q3", "q4"] { _ = try await world.callManager("Query", "s", [question]) }
                let requests = try await world.serverRequests()
                let messages = try #require((requests.last?["body"] as? [String: Any])?["messages"] as? [[String: Any]])
                #expect(messages.compactMap { $0["content"] as? String }.dropFirst() == ["q2", "echo: q2", "q3", "echo: q3", "q4"])
            }
        }
    }

    @Test("20 concurrent queries stream at the same time, each with its own answer")
    func concurrentQueries() async throws {
        try await World.with { world in
            try await world.withGlassd { _ in
                let bus = try await world.connect()
                let events = try await bus.subscribe(SignalMatch(interface: GlassdBus.managerInterface))
                let answers = try await withThrowingTaskGroup(of: (Int, String).self) { group in
                    for i in 0..<20 {
                        group.addTask {
                            let reply = try await bus.call(
                                GlassdBus.name, path: GlassdBus.managerPath, interface: GlassdBus.managerInterface,
                                member: "Query", [.string("[slow] number \(i)")])
                            return (i, reply.first?.string ?? "")
                        }
                    }
                    var out: [Int: String] = [:]
                    for try await (i, answer) in group { out[i] = answer }
                    return out
                }
                for i in 0..<20 { #expect(answers[i] == "echo: [slow] number \(i)") }
                // Each answer streams in pieces over a second or more. Queries handled one after
                // another would finish the first before the second starts; here all 20 have
                // streamed a piece before the first is Answered.
                var streaming: Set<String> = []
                var answered = 0
                var streamingAtFirstAnswer: Int?
                for await event in events {
                    guard case .signal(let signal) = event else {
                        Issue.record("signals were lost")
                        break
                    }
                    let id = signal.arguments.first?.string ?? ""
                    if signal.member == GlassdBus.Signal.answerDelta {
                        streaming.insert(id)
                    } else if signal.member == GlassdBus.Signal.answered {
                        if streamingAtFirstAnswer == nil { streamingAtFirstAnswer = streaming.count }
                        answered += 1
                        if answered == 20 { break }
                    }
                }
                #expect(streamingAtFirstAnswer == 20)
                #expect(answered == 20)
                await bus.close()
            }
        }
    }

    @Test("Introspect and property reads are answered while a slow Query streams")
    func busNeverBlocks() async throws {
        try await World.with { world in
            try await world.withGlassd { _ in
                let bus = try await world.connect()
                try await withThrowingTaskGroup(of: Void.self) { group in
                    let finished = Flag()
                    // Subscribed before the call, so its first piece cannot be missed.
                    let deltas = try await bus.signals(SignalMatch(member: GlassdBus.Signal.answerDelta))
                    group.addTask {
                        _ = try await bus.call(
                            GlassdBus.name, path: GlassdBus.managerPath, interface: GlassdBus.managerInterface,
                            member: "Query", [.string("[slow] take your time")])
                        finished.set()
                    }
                    // Wait until the answer is streaming.
                    var streaming = false
                    for await _ in deltas {
                        streaming = true
                        break
                    }
                    try #require(streaming)
                    let xml = try await bus.call(
                        GlassdBus.name, path: GlassdBus.managerPath, interface: "org.freedesktop.DBus.Introspectable",
                        member: "Introspect")
                    let mode = try await bus.call(
                        GlassdBus.name, path: GlassdBus.managerPath, interface: "org.freedesktop.DBus.Properties",
                        member: "Get", [.string(GlassdBus.managerInterface), .string("Mode")])
                    // Both answered before the slow query's reply: the bus was not held up by it.
                    #expect(!finished.isSet, "the slow query should still be streaming")
                    #expect(xml.first?.string?.contains("<interface name=\"org.glassd.Manager1\">") == true)
                    #expect(mode == [.variant(.string("assistant"))])
                    try await group.waitForAll()
                    #expect(finished.isSet)
                }
                await bus.close()
            }
        }
    }
}
