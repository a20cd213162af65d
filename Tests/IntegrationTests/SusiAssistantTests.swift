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

    @Test("on the glasses: a laid-out answer in pages, turned by taps; after the last the glasses are ready for a question",
          .enabled(if: BLEWorld.available || ProcessInfo.processInfo.environment["GLASSD_REQUIRE_BLE"] != nil))
    func pagesOnTheGlasses() async throws {
        let monocle = 3
        try await BLEWorld.with { ble in
            try await withBackground(
                "/usr/bin/env", ["python3", Paths.fixtures + "/fake_susi.py"], log: ble.world.directory + "/susi.log", firstLine: true
            ) { _, line in
                let url = "http://127.0.0.1:" + (line.split(separator: " ").last.map(String.init) ?? "")
                let config = ble.world.directory + "/susi-ble.conf"
                try """
                [assistant]
                kind = "susi"
                base_url = "\(url)"
                timeout_seconds = 20
                [bluetooth]
                adapter = "hci0"
                scan_timeout = 3
                reconnect_max_seconds = 5

                """.write(toFile: config, atomically: true, encoding: .utf8)
                try await ble.withSession(monocle, config: config) { bus, vm in
                    try await ble.pairReady(monocle, bus)
                    let first = try await vm.waitForDisplay(containing: "1/") {
                        let asked = try await ble.world.callManager("Query", "s", ["mixed"])
                        #expect(asked.ok, "\(asked.stderr)")
                    }
                    #expect(VirtualMonocle.reading(first).contains("Everything at once:"), "\(first)")
                    #expect(first.contains("Tap for more"), "\(first)")
                    let total = try #require(first.split(separator: "/").last.flatMap { Int($0.prefix { $0.isNumber }) })
                    #expect(total >= 2)
                    var shown: [String] = [first]
                    for page in 2...total {
                        shown.append(try await vm.waitForDisplay(containing: "\(page)/\(total)") { try await vm.call("Tap") })
                    }
                    #expect(shown.last?.contains("Tap to speak") == true, "\(shown.last ?? "")")
                    // Every part came through the pages: the link's text, the list, the table's header
                    // (its rows are blank: "mixed" shares the news rows, which have no such keys), the place.
                    let all = shown.map(VirtualMonocle.reading).joined(separator: " ")
                    for part in ["SUSI.AI", "1. Rain expected", "2. Bridge reopens", "Population City Country", "52.52000, 13.40500"] {
                        #expect(all.contains(part), "\(part) in \(all)")
                    }
                    // After the last page a tap is a question again.
                    try await ble.world.setTranscript("what is the tallest mountain")
                    try await vm.call("FeedAudio", [.string(try SpeechFixture.speech(in: ble.world.directory))])
                    _ = try await vm.waitForDisplay(containing: "Listening") { try await vm.call("Tap") }
                }
            }
        }
    }
}
