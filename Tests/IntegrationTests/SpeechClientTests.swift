// SPDX-License-Identifier: GPL-2.0-or-later
@testable import AssistantEngine
import Audio
import Foundation
import HTTPKit
import Testing

/// glassd's text-to-speech client against the fake OpenAI server's /v1/audio/speech, over libcurl:
/// a real local server, real HTTP, a real streamed body.
@Suite("Speech client against a local server", .timeLimit(.minutes(5)))
struct SpeechClientTests {
    private static let key = "sk-tts-test-key-5150"
    /// The fake server's tone: 60 ms a character, 24 kHz s16le (16 kHz once decoded).
    private static let bytesPerCharacter: Int = 60 * 24 * 2
    private static let samplesPerCharacter: Int = 60 * 16
    private static let wavHeader: Int = 44

    /// The fake server until `body` ends; `body` gets its base URL (…/v1).
    private func withServer<R: Sendable>(_ body: (String) async throws -> R) async throws -> R {
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        return try await withBackground(
            "/usr/bin/env", ["python3", Paths.fixtures + "/fake_openai.py"], log: directory + "/server.log", firstLine: true
        ) { _, line in
            let port = line.split(separator: " ").last.map(String.init) ?? ""
            return try await body("http://127.0.0.1:\(port)/v1")
        }
    }

    private func client(_ url: String, format: SpeechServerConfig.Format = .wav, key: String? = Self.key) throws -> SpeechClient {
        SpeechClient(
            config: SpeechServerConfig(
                baseURL: url, model: "tts-1", voice: "alloy", format: format, apiKey: key, timeout: .seconds(20)),
            transport: try CurlHTTPTransport(), retry: RetryPolicy(maxAttempts: 3, baseDelay: .milliseconds(10)))
    }

    /// POSTs JSON to one of the fake server's control paths.
    private func control(_ url: String, _ path: String, _ json: String = "{}") async throws {
        let response = try await CurlHTTPTransport().send(
            HTTPRequest(
                url: url.replacingOccurrences(of: "/v1", with: "") + path, headers: [("Content-Type", "application/json")],
                body: Array(json.utf8), timeout: .seconds(10)))
        for try await _ in response.body {}
        #expect(response.status == 204, "\(path): HTTP \(response.status)")
    }

    /// The speech requests the server saw, in order.
    private func requests(_ url: String) async throws -> [[String: Any]] {
        let response = try await CurlHTTPTransport().send(
            HTTPRequest(method: "GET", url: url.replacingOccurrences(of: "/v1", with: "") + "/_requests", timeout: .seconds(10)))
        var bytes: [UInt8] = []
        for try await chunk in response.body { bytes += chunk }
        let all = (try JSONSerialization.jsonObject(with: Data(bytes))) as? [[String: Any]] ?? []
        return all.filter { ($0["path"] as? String)?.hasSuffix("/audio/speech") == true }
    }

    private func collect(_ stream: SpeechAudioStream) async throws -> [UInt8] {
        var bytes: [UInt8] = []
        for try await chunk in stream { bytes += chunk }
        return bytes
    }

    @Test("the audio streams: the first bytes are read while the server still holds the rest; all of it decodes to the text's length")
    func streamed() async throws {
        try await withServer { url in
            try await control(url, "/_speech", #"{"hold": true}"#)
            let text = "The tallest mountain is Everest."  // 32 characters: 1.92 s at 60 ms each
            let stream = try await client(url).speak(text)
            var iterator = stream.makeAsyncIterator()
            let first = try #require(try await iterator.next())
            #expect(Array(first.prefix(4)) == Array("RIFF".utf8))
            // One piece of 100 ms written, the rest held: what we read came before the end.
            let held = try await requests(url)
            #expect(held.count == 1)
            #expect((held.first?["t_pieces"] as? [Double])?.count == 1)
            try await control(url, "/_speech_release")
            var bytes = first
            while let chunk = try await iterator.next() { bytes += chunk }
            #expect(bytes.count == Self.wavHeader + 32 * Self.bytesPerCharacter)
            var audio = try SpeechAudio(.wav)
            let samples = try audio.feed(bytes) + audio.finish()
            #expect(samples.count == 32 * Self.samplesPerCharacter)

            // What was sent: CreateSpeechRequest's JSON, the key as a bearer token.
            let request = try #require(try await requests(url).first)
            let headers = request["headers"] as? [String: String] ?? [:]
            #expect(headers["authorization"] == "Bearer \(Self.key)")
            #expect(headers["content-type"] == "application/json")
            let body = request["body"] as? [String: Any] ?? [:]
            #expect(body["model"] as? String == "tts-1" && body["voice"] as? String == "alloy")
            #expect(body["input"] as? String == text && body["response_format"] as? String == "wav")
            #expect(body["speed"] == nil)
        }
    }

    @Test("libcurl's response headers come without their line end (CRLF is one Character in Swift)")
    func headerValues() async throws {
        try await withServer { url in
            let response = try await CurlHTTPTransport().send(
                HTTPRequest(
                    url: url + "/audio/speech", headers: [("Content-Type", "application/json")],
                    body: Array(#"{"model":"tts-1","input":"Hi.","voice":"alloy"}"#.utf8), timeout: .seconds(10)))
            for try await _ in response.body {}
            #expect(response.headers["content-type"] == "audio/wav")
            #expect(response.headers["transfer-encoding"] == "chunked")
        }
    }

    @Test("the fake server's own checks of its endpoints (speech among them) pass")
    func fakeSelfTest() async throws {
        let result = try await runCommand("python3", [Paths.fixtures + "/fake_openai.py", "--self-test"])
        #expect(result.ok && result.stdout.contains("self-test ok"), "\(result.stdout)\n\(result.stderr)")
    }

    @Test("pcm: raw 24 kHz samples, 16 kHz once decoded")
    func pcm() async throws {
        try await withServer { url in
            let bytes = try await collect(try await client(url, format: .pcm).speak("Hello there."))
            #expect(bytes.count == 12 * Self.bytesPerCharacter)
            var audio = try SpeechAudio(.pcm(rate: 24_000))
            #expect(try (audio.feed(bytes) + audio.finish()).count == 12 * Self.samplesPerCharacter)
            let body = try #require(try await requests(url).first?["body"] as? [String: Any])
            #expect(body["response_format"] as? String == "pcm")
        }
    }

    @Test("no speech endpoint (404) is NotConfigured at once, not retried")
    func missing() async throws {
        try await withServer { url in
            try await control(url, "/_speech", #"{"missing": true}"#)
            await #expect(throws: AssistantError.notConfigured("127.0.0.1 has no speech endpoint at \(url)/audio/speech (HTTP 404).")) {
                _ = try await client(url).speak("Hello.")
            }
            #expect(try await requests(url).count == 1)
        }
    }

    @Test("a 400's OpenAI error message is passed on without the key; 401 is Unauthorized; neither is retried")
    func refusals() async throws {
        try await withServer { url in
            // [leakkey]: a careless server quoting the Authorization header back.
            do {
                _ = try await client(url).speak("[leakkey] Hello.")
                Issue.record("a 400 was taken")
            } catch {
                guard case .upstreamFailed(let message)? = error as? AssistantError else { throw error }
                #expect(message.hasPrefix("127.0.0.1 answered HTTP 400: bad request with header Bearer"), "\(message)")
                #expect(!message.contains(Self.key) && message.contains("[redacted]"), "\(message)")
            }
            await #expect(throws: AssistantError.unauthorized("127.0.0.1 refused the API key (HTTP 401).")) {
                _ = try await client(url).speak("[401] Hello.")
            }
            // The server's own refusal of a text over 4096 characters never happens: refused here.
            await #expect(throws: AssistantError.invalidArgs("The text to speak is longer than 4096 characters.")) {
                _ = try await client(url).speak(String(repeating: "é", count: 4097))
            }
            #expect(try await requests(url).count == 2)
        }
    }

    @Test("a failure before the first audio byte is retried; one after it is final, not retried")
    func retryBeforeFirstByte() async throws {
        try await withServer { url in
            let bytes = try await collect(try await client(url).speak("[500once] Hi."))
            #expect(bytes.count == Self.wavHeader + 13 * Self.bytesPerCharacter)
            #expect(try await requests(url).count == 2)

            let cut = try await client(url).speak("[midstream] Hi there, it is late.")
            var got = 0
            do {
                for try await chunk in cut { got += chunk.count }
                Issue.record("a cut body was taken as whole")
            } catch {
                guard case .upstreamFailed? = error as? AssistantError else { throw error }
            }
            #expect(got > 0)
            #expect(try await requests(url).count == 3)
        }
    }

    @Test("cancelling the reader ends the reading with the speech cancelled")
    func cancelled() async throws {
        try await withServer { url in
            try await control(url, "/_speech", #"{"hold": true}"#)
            let stream = try await client(url).speak("This answer is never heard in full.")
            let first = AsyncStream<Void>.makeStream()
            let reader = Task {
                var iterator = stream.makeAsyncIterator()
                _ = try await iterator.next()
                first.continuation.yield()
                while try await iterator.next() != nil {}
            }
            try await within(.seconds(30), failure: { "the first audio never came" }) {
                for await _ in first.stream { return }
            }
            reader.cancel()
            await #expect(throws: AssistantError.upstreamFailed("The speech was cancelled.")) { try await reader.value }
            try await control(url, "/_speech_release")
        }
    }
}
