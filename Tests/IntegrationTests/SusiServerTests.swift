// SPDX-License-Identifier: GPL-2.0-or-later
import AnswerModel
import AssistantEngine
import Concurrency
import Foundation
@testable import HTTPKit
import Testing

/// glassd's SUSI client over libcurl against the fake SUSI server (Tests/Fixtures/fake_susi.py).
@Suite("SUSI client against fake_susi.py", .timeLimit(.minutes(2)))
struct SusiServerTests {
    private func withFakeSusi(_ body: (String) async throws -> Void) async throws {
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await withBackground(
            "/usr/bin/env", ["python3", Paths.fixtures + "/fake_susi.py"], log: directory + "/susi.log", firstLine: true
        ) { _, line in
            try await body("http://127.0.0.1:" + (line.split(separator: " ").last.map(String.init) ?? ""))
        }
    }

    private func client(_ url: String, timeout: Duration = .seconds(20)) throws -> SusiClient {
        try SusiClient(
            config: SusiConfig(baseURL: url, timeout: timeout), transport: CurlHTTPTransport(),
            timeZone: TimeZone(identifier: "Asia/Kolkata")!, retry: RetryPolicy(maxAttempts: 2, baseDelay: .milliseconds(50)))
    }

    @Test("every kind of answer arrives typed; the question and settings reach the server as sent")
    func kinds() async throws {
        try await withFakeSusi { url in
            let susi = try client(url)
            #expect(try await susi.ask("text").answer == .text("Hello, I am SUSI."))
            #expect(try await susi.ask("link").answer.parts.last == .link(text: "SUSI.AI", url: "https://susi.test/"))
            let news = try await susi.ask("news").answer.parts
            #expect(news.last == .list(title: "Here are the headlines:", items: [
                "Rain expected in the north — Bring an umbrella", "Bridge reopens", "Library extends hours — Open until 22:00",
            ]))
            guard case .table(let columns, let rows)? = try await susi.ask("table").answer.parts.last else {
                Issue.record("no table")
                return
            }
            #expect(columns == ["Population", "City", "Country"])
            #expect(rows.first == ["3645000", "Berlin", "Germany"])
            #expect(try await susi.ask("map").answer.parts.last == .place(name: "Berlin", latitude: 52.52, longitude: 13.405))
            #expect(try await susi.ask("search").answer.parts == [
                .link(text: "Search: glassd smart glasses", url: "https://duckduckgo.com/?q=glassd%20smart%20glasses"),
            ])
            #expect(try await susi.ask("mixed").answer.parts.map(\.kind) == ["text", "link", "list", "table", "place"])
            let unknown = try await susi.ask("unknown")
            #expect(unknown.answer.parts == [.text("Playing music."), .text("happy")])
            #expect(unknown.skipped == ["audio_play"])
            #expect(try await susi.ask("what is 1+1 & more?").answer == .text("You said: what is 1+1 & more?"))

            let (status, body) = try await get(url + "/_requests")
            #expect(status == 200)
            let requests = try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [[String: String]])
            #expect(requests.last == [
                "q": "what is 1+1 & more?", "timezoneOffset": "-330", "language": "en", "device_type": "Smart Glasses",
                "actions": "answer,anchor,rss,table,map,websearch",
            ])
        }
    }

    @Test("malformed, empty, HTTP 500 (retried) and slow answers fail as they should")
    func failures() async throws {
        try await withFakeSusi { url in
            await #expect(throws: AssistantError.upstreamFailed("127.0.0.1 sent a malformed answer.")) {
                try await client(url).ask("malformed")
            }
            await #expect(throws: AssistantError.upstreamFailed("SUSI had no answer to that.")) { try await client(url).ask("empty") }
            await #expect(throws: AssistantError.upstreamFailed("127.0.0.1 answered HTTP 500.")) { try await client(url).ask("error500") }
            await #expect(throws: AssistantError.timeout("No answer from 127.0.0.1 within 1 s.")) {
                try await client(url, timeout: .seconds(1)).ask("slow")
            }
            let (_, body) = try await get(url + "/_requests")
            let asked = (try JSONSerialization.jsonObject(with: Data(body)) as? [[String: String]] ?? []).compactMap { $0["q"] }
            #expect(asked == ["malformed", "empty", "error500", "error500", "slow"])
        }
    }

    @Test("a transport nobody holds releases its curl handle: at once when idle, after its last response when one is still read")
    func transportLifetime() async throws {
        weak var idle: CurlHTTPTransport?
        let idleExited: OneShotEvent
        do {
            let transport = try CurlHTTPTransport()
            idle = transport
            idleExited = transport.exited
        }
        #expect(idle == nil, "something still holds the idle transport")
        try await within(.seconds(60), failure: { "the idle transport's curl handle was not released" }) { await idleExited.wait() }

        try await withFakeSusi { url in
            weak var released: CurlHTTPTransport?
            let exited: OneShotEvent
            let response: HTTPResponse
            do {
                let transport = try CurlHTTPTransport()
                released = transport
                exited = transport.exited
                response = try await transport.send(HTTPRequest(method: "GET", url: url + "/_requests", timeout: .seconds(10)))
            }
            #expect(released == nil, "something still holds the transport")
            var body: [UInt8] = []
            for try await chunk in response.body { body += chunk }
            #expect(response.status == 200)
            #expect((try? JSONSerialization.jsonObject(with: Data(body))) is [Any], "\(String(decoding: body, as: UTF8.self))")
            try await within(.seconds(60), failure: { "the curl handle was not released after its last response" }) { await exited.wait() }
        }
    }

    private func get(_ url: String) async throws -> (Int, [UInt8]) {
        let response = try await CurlHTTPTransport().send(HTTPRequest(method: "GET", url: url, timeout: .seconds(10)))
        var body: [UInt8] = []
        for try await chunk in response.body { body += chunk }
        return (response.status, body)
    }
}
