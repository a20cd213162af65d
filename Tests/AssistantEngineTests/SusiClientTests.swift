// SPDX-License-Identifier: GPL-2.0-or-later
@testable import AnswerModel
@testable import AssistantEngine
import Foundation
import Synchronization
import Testing

/// A SUSI response around one answer with these actions and data rows.
private func susi(_ actions: String, data: String = "[]", query: String = "q") -> ScriptedTransport.Canned {
    let body = """
        {"query":"\(query)","answer_date":"2024-01-01T12:00:00.000Z","answer_time":3,
         "answers":[{"data":\(data),"metadata":{"count":1},"actions":[\(actions)],"skills":["/en/x.txt"]}]}
        """
    return .init(status: 200, headers: ["content-type": "application/json"], chunks: [body])
}

private let news = #"[{"headline":"Rain","summary":"Wet","url":"http://a"},{"headline":"Sun","url":"http://b"},{"headline":"Fog","summary":"Grey"}]"#

@Suite("SUSI client", .timeLimit(.minutes(5)))
struct SusiClientTests {
    private func client(_ transport: ScriptedTransport, zone: String = "UTC", sleeps: SleepLog = SleepLog()) -> SusiClient {
        SusiClient(
            config: SusiConfig(baseURL: "http://susi.test:4000/", timeout: .seconds(20)), transport: transport,
            timeZone: TimeZone(identifier: zone)!, sleep: sleeps.sleep)
    }

    private func ask(_ actions: String, data: String = "[]") async throws -> SusiReply {
        try await client(ScriptedTransport([susi(actions, data: data)])).ask("q")
    }

    private func parameters(_ transport: ScriptedTransport) throws -> [String: String] {
        let url = try #require(transport.requests.withLock { $0.first?.url })
        let items = try #require(URLComponents(string: url)?.queryItems)
        return Dictionary(uniqueKeysWithValues: items.map { ($0.name, $0.value ?? "") })
    }

    @Test("the request is a GET of /susi/chat.json with the question and settings encoded")
    func request() async throws {
        let transport = ScriptedTransport([susi(#"{"type":"answer","expression":"hi"}"#)])
        _ = try await client(transport).ask("  a+b = c & d? ü  ")
        let request = try #require(transport.requests.withLock { $0.first })
        #expect(request.method == "GET")
        #expect(request.url.hasPrefix("http://susi.test:4000/susi/chat.json?q=a%2Bb%20%3D%20c%20%26%20d%3F%20%C3%BC&"))
        #expect(try parameters(transport) == [
            "q": "a+b = c & d? ü", "timezoneOffset": "0", "language": "en", "device_type": "Smart Glasses",
            "actions": "answer,anchor,rss,table,map,websearch",
        ])
    }

    @Test("timezoneOffset is JavaScript's: UTC minus local, in minutes, at the time asked", arguments: [
        ("UTC", 1_736_942_400, "0"), ("Europe/Paris", 1_736_942_400, "-60"), ("Europe/Paris", 1_752_580_800, "-120"),
        ("Asia/Kolkata", 1_736_942_400, "-330"), ("America/New_York", 1_736_942_400, "300"),
    ])
    func timezoneOffset(zone: String, seconds: Double, expected: String) async throws {
        let transport = ScriptedTransport([susi(#"{"type":"answer","expression":"hi"}"#)])
        _ = try await client(transport, zone: zone).ask("time", now: Date(timeIntervalSince1970: seconds))
        #expect(try parameters(transport)["timezoneOffset"] == expected)
    }

    @Test("answer and anchor become text and a link, in order")
    func answerAndAnchor() async throws {
        let reply = try await ask(#"{"type":"answer","expression":"See:"},{"type":"anchor","link":"https://x.org","text":"X"}"#)
        #expect(reply == SusiReply(answer: TypedAnswer([.text("See:"), .link(text: "X", url: "https://x.org")])))
    }

    @Test("rss rows are read by the key names the action gives; the text before titles the list")
    func rss() async throws {
        let action = #"{"type":"rss","title":"headline","description":"summary","link":"url","count":-1}"#
        let titled = try await ask(#"{"type":"answer","expression":"News:"},"# + action, data: news)
        #expect(titled.answer.parts == [.text("News:"), .list(title: "News:", items: ["Rain — Wet", "Sun", "Fog — Grey"])])
        let untitled = try await ask(action, data: news)
        #expect(untitled.answer.parts == [.list(title: "Results", items: ["Rain — Wet", "Sun", "Fog — Grey"])])
    }

    @Test("rss count: missing or -1 is all, larger is clamped, 2 is two, 0 shows nothing", arguments: [
        ("", 3), (#","count":-1"#, 3), (#","count":99"#, 3), (#","count":"2""#, 2), (#","count":0"#, 0),
    ])
    func rssCount(count: String, expected: Int) async throws {
        let reply = try await ask(
            #"{"type":"answer","expression":"News:"},{"type":"rss","title":"headline"\#(count)}"#, data: news)
        if expected == 0 {
            #expect(reply.answer.parts == [.text("News:")])
            #expect(reply.skipped == ["rss"])
        } else {
            #expect(reply.answer.parts.last == .list(title: "News:", items: Array(["Rain", "Sun", "Fog"].prefix(expected))))
        }
    }

    @Test("table columns keep the order of the columns object; count limits the rows")
    func table() async throws {
        let data = #"[{"a":"1","z":"2","m":3},{"m":6,"a":"4"},{"a":"7","z":"8","m":9}]"#
        let all = try await ask(#"{"type":"table","columns":{"z":"Zed","a":"Ay","m":"Em"},"count":-1}"#, data: data)
        #expect(all.answer.parts == [.table(columns: ["Zed", "Ay", "Em"], rows: [["2", "1", "3"], ["", "4", "6"], ["8", "7", "9"]])])
        let two = try await ask(#"{"type":"table","columns":{"m":"Em","a":"Ay"},"count":2}"#, data: data)
        #expect(two.answer.parts == [.table(columns: ["Em", "Ay"], rows: [["3", "1"], ["6", "4"]])])
        let more = try await ask(#"{"type":"table","columns":{"a":"Ay"},"count":10}"#, data: data)
        #expect(more.answer.parts == [.table(columns: ["Ay"], rows: [["1"], ["4"], ["7"]])])
        let none = try await ask(#"{"type":"answer","expression":"t"},{"type":"table","columns":{"a":"Ay"},"count":0}"#, data: data)
        #expect(none == SusiReply(answer: .text("t"), skipped: ["table"]))
    }

    @Test("map coordinates come as strings or numbers; the text before names the place")
    func map() async throws {
        let strings = try await ask(
            #"{"type":"answer","expression":"Berlin"},{"type":"map","latitude":"52.52","longitude":"13.405","zoom":"13"}"#)
        #expect(strings.answer.parts == [.text("Berlin"), .place(name: "Berlin", latitude: 52.52, longitude: 13.405)])
        let numbers = try await ask(#"{"type":"map","latitude":-33.8,"longitude":151.2,"zoom":12}"#)
        #expect(numbers.answer.parts == [.place(name: "Location", latitude: -33.8, longitude: 151.2)])
        let broken = try await ask(#"{"type":"answer","expression":"x"},{"type":"map","latitude":"north","longitude":"1"}"#)
        #expect(broken == SusiReply(answer: .text("x"), skipped: ["map"]))
    }

    @Test("websearch is a DuckDuckGo link, its query defaulting to the question SUSI echoes")
    func websearch() async throws {
        let reply = try await ask(#"{"type":"websearch","query":"fish & chips"}"#)
        #expect(reply.answer.parts == [.link(text: "Search: fish & chips", url: "https://duckduckgo.com/?q=fish%20%26%20chips")])
        let echoed = try await client(ScriptedTransport([susi(#"{"type":"websearch"}"#, query: "whales")])).ask("whales")
        #expect(echoed.answer.parts == [.link(text: "Search: whales", url: "https://duckduckgo.com/?q=whales")])
    }

    @Test("unknown types show their expression or text; the rest are skipped and reported")
    func unknown() async throws {
        let reply = try await ask(
            #"{"type":"answer","expression":"Playing"},{"type":"audio_play","identifier":"x"},"#
                + #"{"type":"emotion","expression":"happy"},{"type":"button_push","text":"pushed"},{"type":"stop"}"#)
        #expect(reply == SusiReply(
            answer: TypedAnswer([.text("Playing"), .text("happy"), .text("pushed")]), skipped: ["audio_play", "stop"]))
    }

    @Test("no answers, no actions, nothing showable and malformed JSON fail at once", arguments: [
        (#"{"answers":[]}"#, "SUSI had no answer to that."),
        (#"{"answers":[{"actions":[]}]}"#, "SUSI had no answer to that."),
        (#"{"answers":[{"data":[]}]}"#, "SUSI had no answer to that."),
        (#"{"answers":[{"actions":[{"type":"stop"},{"type":"answer","expression":" "}]}]}"#,
         "SUSI answered with nothing glassd can show (stop, answer)."),
        (#"{"answers":[{"actions":[{"type":"answer","#, "susi.test sent a malformed answer."),
        (#"<html>busy</html>"#, "susi.test sent a malformed answer."),
        (#"{"answers":{}}"#, "susi.test sent a malformed answer."),
    ])
    func failures(body: String, message: String) async throws {
        let transport = ScriptedTransport([.init(status: 200, headers: [:], chunks: [body]), susi("")])
        await #expect(throws: AssistantError.upstreamFailed(message)) { try await client(transport).ask("q") }
        #expect(transport.count == 1)
    }

    @Test("HTTP 500 is retried a bounded number of times, then fails naming only the host")
    func serverError() async throws {
        let transport = ScriptedTransport(Array(repeating: .init(status: 500, headers: [:], chunks: ["q=secret"]), count: 9))
        let sleeps = SleepLog()
        await #expect(throws: AssistantError.upstreamFailed("susi.test answered HTTP 500.")) {
            try await client(transport, sleeps: sleeps).ask("secret question")
        }
        #expect(transport.count == RetryPolicy().maxAttempts)
        #expect(sleeps.waits.withLock { $0.count } == RetryPolicy().maxAttempts - 1)
        let recovers = ScriptedTransport([.init(status: 503, headers: [:], chunks: []), susi(#"{"type":"answer","expression":"ok"}"#)])
        #expect(try await client(recovers).ask("q").answer == .text("ok"))
    }

    @Test("HTTP 404 is final")
    func notFound() async throws {
        let transport = ScriptedTransport([.init(status: 404, headers: [:], chunks: []), susi("")])
        await #expect(throws: AssistantError.upstreamFailed("susi.test answered HTTP 404.")) { try await client(transport).ask("q") }
        #expect(transport.count == 1)
    }

    @Test("transport failures: unreachable is retried and keeps the question out; a timeout is final")
    func transport() async throws {
        let refused = ScriptedTransport([.init(status: 0, chunks: [], failure: .connectionFailed("refused for my secret question"))])
        await #expect(throws: AssistantError.upstreamFailed("Cannot reach susi.test: script exhausted")) {
            try await client(refused).ask("my secret question")
        }
        let once = ScriptedTransport([
            .init(status: 0, chunks: [], failure: .connectionFailed("refused for my secret question")),
        ])
        let error = await #expect(throws: AssistantError.self) {
            try await SusiClient(
                config: SusiConfig(baseURL: "http://susi.test", timeout: .seconds(5)), transport: once,
                retry: RetryPolicy(maxAttempts: 1)
            ).ask("my secret question")
        }
        #expect(error == .upstreamFailed("Cannot reach susi.test: refused for [redacted]"))
        let slow = ScriptedTransport([.init(status: 0, chunks: [], failure: .timedOut)])
        await #expect(throws: AssistantError.timeout("No answer from susi.test within 20 s.")) { try await client(slow).ask("q") }
        #expect(slow.count == 1)
        await #expect(throws: AssistantError.invalidArgs("Ask SUSI something.")) { try await client(slow).ask("  ") }
    }
}
