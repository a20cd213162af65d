// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import Foundation
import GlassdAPI
import Testing

extension World {
    /// A glassd.conf on this world's server with `[assistant] conversation_token_limit`.
    func writeConfig(conversationTokenLimit: Int) throws -> String {
        let path = directory + "/glassd-tokens.conf"
        try """
        [assistant]
        base_url = "\(serverURL)"
        chat_model = "fake-model"
        timeout_seconds = 10
        conversation_token_limit = \(conversationTokenLimit)

        """.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// The chat requests the fake server answered, in order (the refused ones left out).
    func chatRequests() async throws -> [[String: Any]] {
        try await serverRequests().filter {
            ($0["path"] as? String)?.hasSuffix("/chat/completions") == true && $0["rejected"] == nil
        }
    }
}

/// Manager1.TokensUsed, read on `bus`.
private func tokensUsed(_ bus: BusConnection) async throws -> UInt64? {
    let reply = try await bus.call(
        GlassdBus.name, path: GlassdBus.managerPath, interface: "org.freedesktop.DBus.Properties", member: "Get",
        [.string(GlassdBus.managerInterface), .string(GlassdBus.Property.tokensUsed)])
    guard case .uint64(let used) = reply.first?.unwrapped else { return nil }
    return used
}

/// The last chat request the fake server answered, and the total it reported for it.
private func lastReport(_ world: World) async throws -> (request: [String: Any], total: UInt64?) {
    guard let request = try await world.chatRequests().last else { throw TestFailure("no chat request") }
    return (request, reported(request))
}

/// The total the fake server reported for a request (nil when it reported none).
private func reported(_ request: [String: Any]) -> UInt64? {
    ((request["usage"] as? [String: Any])?["total_tokens"] as? Int).map(UInt64.init)
}

/// The roles and texts of a chat request's messages after the system prompt.
private func sent(_ request: [String: Any]) -> [String] {
    let messages = (request["body"] as? [String: Any])?["messages"] as? [[String: Any]] ?? []
    return messages.dropFirst().map { "\($0["role"] as? String ?? ""): \($0["content"] as? String ?? "")" }
}

@Suite("Token budget over D-Bus", .timeLimit(.minutes(5)), .serialized)
struct TokenTests {
    @Test("TokensUsed follows the reported usage with PropertiesChanged, is 0 after ClearHistory, and is read back after a restart")
    func followsUsage() async throws {
        try await World.with { world in
            let kept = try await world.withGlassd { _ in
                let bus = try await world.connect()
                let changes = try await bus.subscribe(
                    SignalMatch(
                        path: GlassdBus.managerPath, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"))
                #expect(try await tokensUsed(bus) == 0)
                var expected: UInt64 = 0
                for question in ["what is the tallest mountain", "and the date", "and the weather tomorrow in Paris"] {
                    let result = try await world.callManager("Query", "s", [question])
                    #expect(result.ok, "\(result.stderr)")
                    let (request, total) = try await lastReport(world)
                    // Asked for, as the spec has it, and reported.
                    let options = (request["body"] as? [String: Any])?["stream_options"] as? [String: Any]
                    #expect(options?["include_usage"] as? Bool == true)
                    expected += try #require(total)
                    // Set before the reply: no wait needed.
                    #expect(try await tokensUsed(bus) == expected)
                }
                // Each change was announced, in order.
                let total = expected
                let announced = try await within(.seconds(10), failure: { "no PropertiesChanged with TokensUsed \(total)" }) {
                    var announced: [UInt64] = []
                    for await event in changes {
                        guard case .signal(let signal) = event,
                            case .uint64(let used)? = signal.arguments.dropFirst().first?.stringKeyed?[
                                GlassdBus.Property.tokensUsed]?.unwrapped
                        else { continue }
                        announced.append(used)
                        if used == total { break }
                    }
                    return announced
                }
                #expect(announced.count == 3 && announced.last == expected, "\(announced)")
                // Stored per turn, on the answer.
                let rows = try await world.sqlite(
                    "SELECT role, IFNULL(prompt_tokens + completion_tokens, -1) FROM messages ORDER BY id")
                let totals = try await world.chatRequests().compactMap(reported).map { "assistant|\($0)" }
                #expect(rows.split(separator: "\n").map(String.init) == zip(["user|-1", "user|-1", "user|-1"], totals).flatMap { [$0, $1] })

                #expect(try await world.callManager("ClearHistory").ok)
                #expect(try await tokensUsed(bus) == 0)
                _ = try await world.callManager("Query", "s", ["after clearing"])
                let after = try #require(try await lastReport(world).total)
                #expect(try await tokensUsed(bus) == after)
                await bus.close()
                return after
            }
            try await world.withGlassd { _ in
                let bus = try await world.connect()
                #expect(try await tokensUsed(bus) == kept)
                await bus.close()
            }
        }
    }

    @Test("past conversation_token_limit the next Query goes without earlier turns, TokensUsed restarts from it, History keeps the old turns")
    func limit() async throws {
        try await World.with { world in
            // About 80 tokens for a short turn (the system prompt is most of it), over 1000 for the
            // long one: the first two share a conversation, the third starts one, the fourth joins it.
            let config = try world.writeConfig(conversationTokenLimit: 500)
            try await world.withGlassd(config: config) { _ in
                let bus = try await world.connect()
                let long = "long " + String(repeating: "x", count: 2000)
                var totals: [UInt64] = []
                for question in ["first", long, "third", "fourth"] {
                    let result = try await world.callManager("Query", "s", [question])
                    #expect(result.ok, "\(result.stderr)")
                    totals.append(try #require(try await lastReport(world).total))
                    if question == "third" { #expect(try await tokensUsed(bus) == totals[2]) }
                }
                #expect(totals[0] <= 500 && totals[0] + totals[1] > 500 && totals[2] + totals[3] <= 500, "\(totals)")
                let requests = try await world.chatRequests()
                #expect(requests.map(sent) == [
                    ["user: first"],
                    ["user: first", "assistant: echo: first", "user: \(long)"],
                    ["user: third"],
                    ["user: third", "assistant: echo: third", "user: fourth"],
                ])
                #expect(try await tokensUsed(bus) == totals[2] + totals[3])
                let history = try await world.glassctl(["history", "--json", "-n", "100"])
                let rows = try JSONSerialization.jsonObject(with: Data(history.stdout.utf8)) as? [[String: Any]]
                #expect(rows?.map { $0["text"] as? String ?? "" } == [
                    "first", "echo: first", long, "echo: " + long, "third", "echo: third", "fourth", "echo: fourth",
                ])
                #expect(try await world.sqlite("SELECT COUNT(*) FROM conversations") == "2")
                #expect(world.log().contains("new conversation: the last one used more tokens than conversation_token_limit"))
                await bus.close()
            }
        }
    }

    @Test("a server that ignores include_usage leaves TokensUsed as it was; one that refuses stream_options is asked again without it")
    func serversWithoutUsage() async throws {
        try await World.with { world in
            try await world.withGlassd(config: try world.writeConfig(conversationTokenLimit: 0)) { _ in
                let bus = try await world.connect()
                _ = try await world.callManager("Query", "s", ["counted"])
                let counted = try #require(try await lastReport(world).total)

                let ignored = try await world.callManager("Query", "s", ["[nousage] not counted"])
                #expect(busctlString(ignored) == "echo: [nousage] not counted", "\(ignored.stderr)")
                #expect(try await lastReport(world).total == nil)
                #expect(try await tokensUsed(bus) == counted)
                // Nothing reported is NULL, not 0.
                #expect(try await world.sqlite("SELECT IFNULL(prompt_tokens, 'NULL') FROM messages ORDER BY id DESC LIMIT 1") == "NULL")

                let strict = try await world.callManager("Query", "s", ["[rejectoptions] strict"])
                #expect(busctlString(strict) == "echo: [rejectoptions] strict", "\(strict.stderr)")
                _ = try await world.callManager("Query", "s", ["then plain"])
                let all = try await world.serverRequests()
                let refused = all.filter { $0["rejected"] != nil }
                #expect(refused.count == 1)
                #expect((refused.first?["rejected"] as? String)?.contains("stream_options") == true)
                // Remembered: from the refusal on, no request carries the field.
                let since = try #require(all.firstIndex { $0["rejected"] != nil })
                #expect(all[(since + 1)...].allSatisfy { ($0["body"] as? [String: Any])?["stream_options"] == nil })
                #expect(try await tokensUsed(bus) == counted)
                await bus.close()
            }
        }
    }
}

private let worldReady = BLEWorld.available || ProcessInfo.processInfo.environment["GLASSD_REQUIRE_BLE"] != nil
private let monocle = 3

@Suite(
    "Token budget on a virtual Monocle", .timeLimit(.minutes(10)), .serialized,
    .enabled(if: worldReady, "the Python BLE world is not set up"))
struct TokenGlassesTests {
    @Test("a question asked on the glasses past the limit starts a new conversation, and the glasses say so above it")
    func noticeOnGlasses() async throws {
        try await BLEWorld.with { ble in
            let config = try ble.world.writeConfig(conversationTokenLimit: 1)
            try await ble.withSession(monocle, config: config) { bus, vm in
                try await ble.pairReady(monocle, bus)
                try await vm.call("FeedAudio", [.string(try SpeechFixture.speech(in: ble.world.directory))])
                // The first question fits any limit (nothing used yet); it uses more than 1.
                try await vm.waitForDisplay(containing: "echo: from the desk") {
                    let result = try await ble.world.glassctl(["query", "from the desk"])
                    #expect(result.ok, "\(result.stderr)")
                }
                // Its end: was taken, so the tap below asks rather than stops a display.
                try await vm.waitForDisplay(containing: "Tap to speak")
                try await ble.world.setTranscript("what is the tallest mountain")
                let signals = try await bus.signals(
                    SignalMatch(path: GlassdBus.managerPath, interface: GlassdBus.managerInterface, member: GlassdBus.Signal.answered))
                // On a loaded run the virtual Monocle can fall silent past glassd's 10 s and the
                // recording breaks off: glassd says so in QueryFailed (NoSpeech) and the glasses go
                // back to "Tap to speak"; the wearer taps again. The question is still past the
                // limit: nothing was kept.
                let failures = try await bus.signals(
                    SignalMatch(path: GlassdBus.managerPath, interface: GlassdBus.managerInterface, member: GlassdBus.Signal.queryFailed))
                let shown: String? = try await withThrowingTaskGroup(of: String?.self) { group in
                    group.addTask {
                        try await vm.waitForDisplay(containing: "New conversation", timeout: .seconds(60)) { try await vm.call("Tap") }
                    }
                    group.addTask {
                        for await failure in failures
                        where failure.arguments.dropFirst(2).first?.string?.contains("stopped sending the recording") == true {
                            return nil
                        }
                        throw TestFailure("the signals ended")
                    }
                    let first = try await group.next() ?? nil
                    group.cancelAll()
                    return first
                }
                var frame = shown ?? ""
                if shown == nil {
                    try await vm.call("FeedAudio", [.string(try SpeechFixture.speech(in: ble.world.directory))])
                    try await vm.waitForDisplay(containing: "Tap to speak")
                    frame = try await vm.waitForDisplay(containing: "New conversation", timeout: .seconds(60)) {
                        try await vm.call("Tap")
                    }
                }
                #expect(VirtualMonocle.reading(frame).contains("New conversation > what is the tallest mountain"), "\(frame)")
                try await within(.seconds(60), failure: { "no Answered" }) {
                    for await _ in signals { return }
                }
                try await vm.waitForDisplay(containing: "echo: what is the tallest mountain")
                let (last, total) = try await lastReport(ble.world)
                #expect(sent(last) == ["user: what is the tallest mountain"])
                #expect(try await tokensUsed(bus) == total)
            }
        }
    }
}
