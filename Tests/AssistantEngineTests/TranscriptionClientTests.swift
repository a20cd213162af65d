// SPDX-License-Identifier: GPL-2.0-or-later
@testable import AssistantEngine
import Synchronization
import Testing

/// A 16 kHz mono 16-bit WAV of `samples`.
func testWAV(_ samples: [Int16]) -> [UInt8] {
    func le32(_ v: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }
    func le16(_ v: Int) -> [UInt8] { (0..<2).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }
    let data = samples.flatMap { le16(Int($0)) }
    return Array("RIFF".utf8) + le32(36 + data.count) + Array("WAVEfmt ".utf8) + le32(16) + le16(1) + le16(1)
        + le32(16000) + le32(32000) + le16(2) + le16(16) + Array("data".utf8) + le32(data.count) + data
}

@Suite("Transcription client", .timeLimit(.minutes(5)))
struct TranscriptionClientTests {
    private let key = "sk-secret-key-123"
    // "\r\n--" in the samples: a body that is not escaped must still frame them.
    private let wav = testWAV([0x0A0D, 0x2D2D, 0, -1, 0x7FFF])

    private func client(
        _ transport: ScriptedTransport, _ sleeps: SleepLog = SleepLog(), key: String? = "sk-secret-key-123",
        language: String? = "en"
    ) -> TranscriptionClient {
        TranscriptionClient(
            config: TranscriptionConfig(
                baseURL: "http://example.test/v1/", model: "whisper-1", apiKey: key, timeout: .seconds(30),
                language: language),
            transport: transport, sleep: sleeps.sleep)
    }

    private static func json(_ status: Int, _ body: String, headers: [String: String] = [:])
        -> ScriptedTransport.Canned
    {
        .init(status: status, headers: ["content-type": "application/json"].merging(headers) { $1 }, chunks: [body])
    }

    private static func boundary(of request: HTTPRequest) throws -> String {
        let type = try #require(request.headers.first { $0.name == "Content-Type" }?.value)
        let prefix = "multipart/form-data; boundary="
        try #require(type.hasPrefix(prefix))
        return String(type.dropFirst(prefix.count))
    }

    @Test("the multipart body is exactly the fields, then the WAV, then the closing boundary")
    func exactBody() async throws {
        let transport = ScriptedTransport([Self.json(200, #"{"text":"hi"}"#)])
        #expect(try await client(transport).transcribe(wav: wav, task: .transcribe) == "hi")
        let request = try #require(transport.requests.withLock { $0.first })
        #expect(request.method == "POST")
        #expect(request.url == "http://example.test/v1/audio/transcriptions")
        #expect(request.headers.contains { $0.name == "Authorization" && $0.value == "Bearer \(key)" })
        #expect(request.headers.contains { $0.name == "Accept" && $0.value == "application/json" })
        let b = try Self.boundary(of: request)
        #expect(!MultipartBody.contains(wav, Array(b.utf8)))
        let expected =
            Array(
                ("--\(b)\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\nwhisper-1\r\n"
                    + "--\(b)\r\nContent-Disposition: form-data; name=\"response_format\"\r\n\r\njson\r\n"
                    + "--\(b)\r\nContent-Disposition: form-data; name=\"language\"\r\n\r\nen\r\n"
                    + "--\(b)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"audio.wav\"\r\n"
                    + "Content-Type: audio/wav\r\n\r\n").utf8) + wav + Array("\r\n--\(b)--\r\n".utf8)
        #expect(request.body == expected)
    }

    @Test("translations go to their own path, without a language field (the spec has none)")
    func translateURL() async throws {
        let transport = ScriptedTransport([Self.json(200, #"{"text":"hello"}"#)])
        #expect(try await client(transport, key: nil).transcribe(wav: wav, task: .translate) == "hello")
        let request = try #require(transport.requests.withLock { $0.first })
        #expect(request.url == "http://example.test/v1/audio/translations")
        #expect(!request.headers.contains { $0.name == "Authorization" })
        let body = String(decoding: request.body, as: UTF8.self)
        #expect(!body.contains(#"name="language""#) && body.contains(#"name="model""#))
    }

    @Test("no language configured: no language field; the boundary is the same for the same body")
    func noLanguage() async throws {
        let transport = ScriptedTransport([Self.json(200, #"{"text":"a"}"#), Self.json(200, #"{"text":"b"}"#)])
        let c = client(transport, language: nil)
        _ = try await c.transcribe(wav: wav, task: .transcribe)
        _ = try await c.transcribe(wav: wav, task: .transcribe)
        let (first, second) = transport.requests.withLock { ($0[0], $0[1]) }
        #expect(!String(decoding: first.body, as: UTF8.self).contains("language"))
        #expect(first.body == second.body)
    }

    @Test("whisper.cpp's spaces and newlines are trimmed and collapsed; text/plain is the text")
    func trimming() async throws {
        let transport = ScriptedTransport([
            Self.json(200, #"{"text":" Hello\n there.\n  How are\tyou?\n"}"#),
            .init(status: 200, headers: ["content-type": "text/plain; charset=utf-8"], chunks: ["  plain\n text \n"]),
            Self.json(200, #"{"text":"\n"}"#),
        ])
        let c = client(transport)
        #expect(try await c.transcribe(wav: wav, task: .transcribe) == "Hello there. How are you?")
        #expect(try await c.transcribe(wav: wav, task: .transcribe) == "plain text")
        #expect(try await c.transcribe(wav: wav, task: .transcribe) == "")
    }

    @Test("401 and 403 are Unauthorized at once, naming no key")
    func unauthorized() async throws {
        let leaky = #"{"error":{"message":"Incorrect API key provided: sk-secret-key-123"}}"#
        let t401 = ScriptedTransport([Self.json(401, leaky)])
        await #expect(throws: AssistantError.unauthorized("example.test refused the API key (HTTP 401).")) {
            try await client(t401).transcribe(wav: wav, task: .transcribe)
        }
        let t403 = ScriptedTransport([Self.json(403, leaky)])
        await #expect(throws: AssistantError.unauthorized("example.test needs an API key (HTTP 403).")) {
            try await client(t403, key: nil).transcribe(wav: wav, task: .transcribe)
        }
        #expect(t401.count == 1 && t403.count == 1)
    }

    @Test("429 waits Retry-After then succeeds; out of quota is final")
    func rateLimited() async throws {
        let sleeps = SleepLog()
        let retried = ScriptedTransport([
            Self.json(
                429, #"{"error":{"message":"slow down","type":"rate_limit_error"}}"#, headers: ["retry-after": "2"]),
            Self.json(200, #"{"text":"ok"}"#),
        ])
        #expect(try await client(retried, sleeps).transcribe(wav: wav, task: .transcribe) == "ok")
        #expect(sleeps.waits.withLock { $0 } == [.seconds(2)])
        let quota = ScriptedTransport([Self.json(429, #"{"error":{"type":"insufficient_quota","message":"x"}}"#)])
        await #expect(throws: AssistantError.rateLimited("The account at example.test is out of quota.")) {
            try await client(quota).transcribe(wav: wav, task: .transcribe)
        }
        #expect(quota.count == 1)
        let always = ScriptedTransport(Array(repeating: Self.json(429, "{}"), count: 10))
        await #expect(throws: AssistantError.rateLimited("example.test is rate limiting; try again later.")) {
            try await client(always).transcribe(wav: wav, task: .transcribe)
        }
        #expect(always.count == RetryPolicy().maxAttempts)
    }

    @Test("500 is retried with backoff and the same bytes, then succeeds; 5xx to the end fails")
    func serverErrors() async throws {
        let sleeps = SleepLog()
        let transport = ScriptedTransport([
            Self.json(500, #"{"error":{"message":"The server had an error","type":"server_error"}}"#),
            Self.json(200, #"{"text":"after retry"}"#),
        ])
        #expect(try await client(transport, sleeps).transcribe(wav: wav, task: .transcribe) == "after retry")
        let waits = sleeps.waits.withLock { $0 }
        #expect(waits.count == 1 && waits[0] >= .milliseconds(375) && waits[0] <= .milliseconds(500))
        #expect(transport.requests.withLock { $0[0].body == $0[1].body })
        // vLLM's older error shape: no "error" wrapper.
        let failing = ScriptedTransport(
            Array(repeating: Self.json(503, #"{"object":"error","message":"no model loaded","code":503}"#), count: 10))
        await #expect(throws: AssistantError.upstreamFailed("example.test answered HTTP 503: no model loaded")) {
            try await client(failing).transcribe(wav: wav, task: .transcribe)
        }
        #expect(failing.count == RetryPolicy().maxAttempts)
    }

    @Test("other 4xx are final with the server's message, in any error shape, keys removed")
    func clientErrors() async throws {
        let cases: [(String, String)] = [
            (#"{"error":"failed to read audio data"}"#, "failed to read audio data"),  // whisper.cpp, Ollama
            (#"{"error":{"message":"Invalid file format.","type":"invalid_request_error","param":null,"code":null}}"#,
             "Invalid file format."),
            (#"{"error":{"message":"bad header Bearer sk-secret-key-123"}}"#, "bad header Bearer [redacted]"),
        ]
        for (body, message) in cases {
            let transport = ScriptedTransport([Self.json(400, body)])
            await #expect(throws: AssistantError.upstreamFailed("example.test answered HTTP 400: \(message)")) {
                try await client(transport).transcribe(wav: wav, task: .transcribe)
            }
            #expect(transport.count == 1)
        }
    }

    @Test("404 says the server has no such endpoint and how whisper.cpp gets one")
    func notFound() async throws {
        let transport = ScriptedTransport([
            .init(status: 404, headers: ["content-type": "text/plain"], chunks: ["File Not Found"])
        ])
        let expected =
            "example.test has no translation endpoint at http://example.test/v1/audio/translations. "
            + "For whisper.cpp (its default path is /inference), start whisper-server with "
            + "--inference-path /v1/audio/translations."
        await #expect(throws: AssistantError.notConfigured(expected)) {
            try await client(transport).transcribe(wav: wav, task: .translate)
        }
        #expect(transport.count == 1)
    }

    @Test("a 200 that is not a transcription is an upstream failure, not retried")
    func malformed() async throws {
        let cases: [(ScriptedTransport.Canned, String)] = [
            (Self.json(200, "{not json"), "example.test sent a malformed transcription."),
            (Self.json(200, #"{"txt":"x"}"#), "example.test sent a malformed transcription."),
            (Self.json(200, #"{"text":42}"#), "example.test sent a malformed transcription."),
            (Self.json(200, #"{"error":"model crashed"}"#), "example.test failed: model crashed"),
            (.init(status: 200, headers: ["content-type": "text/html; charset=utf-8"], chunks: ["<html>"]),
             "example.test sent text/html, not a transcription."),
        ]
        for (canned, message) in cases {
            let transport = ScriptedTransport([canned])
            await #expect(throws: AssistantError.upstreamFailed(message)) {
                try await client(transport).transcribe(wav: wav, task: .transcribe)
            }
            #expect(transport.count == 1)
        }
    }

    @Test("timeouts are final; refused connections are retried, then say the host cannot be reached")
    func transportFailures() async throws {
        let timedOut = ScriptedTransport([.init(status: 0, chunks: [], failure: .timedOut)])
        await #expect(throws: AssistantError.timeout("No transcription from example.test within 30 s.")) {
            try await client(timedOut).transcribe(wav: wav, task: .transcribe)
        }
        #expect(timedOut.count == 1)
        let refused = ScriptedTransport(
            Array(repeating: .init(status: 0, chunks: [], failure: .connectionFailed("Connection refused")), count: 10))
        await #expect(throws: AssistantError.upstreamFailed("Cannot reach example.test: Connection refused")) {
            try await client(refused).transcribe(wav: wav, task: .transcribe)
        }
        #expect(refused.count == RetryPolicy().maxAttempts)
    }

    @Test("empty audio is refused before any request")
    func emptyAudio() async throws {
        let transport = ScriptedTransport([])
        await #expect(throws: AssistantError.invalidArgs("No audio was recorded.")) {
            try await client(transport).transcribe(wav: [], task: .transcribe)
        }
        #expect(transport.count == 0)
    }

    @Test("the boundary avoids every content, deterministically")
    func boundary() {
        let first = MultipartBody.candidate(seed: 7, salt: 0)
        #expect(MultipartBody.boundary(avoiding: [[1, 2, 3]], seed: 7) == first)
        let clash = Array("xx\(first)yy".utf8)
        let second = MultipartBody.boundary(avoiding: [[1], clash], seed: 7)
        #expect(second == MultipartBody.candidate(seed: 7, salt: 1) && second != first)
        #expect(second.utf8.count <= 70)  // RFC 2046's limit
        let body = MultipartBody([.field(name: "a\"b", value: "v")])
        #expect(body.boundary == MultipartBody([.field(name: "a\"b", value: "v")]).boundary)
        #expect(body.boundary != MultipartBody([.field(name: "a\"b", value: "w")]).boundary)
        #expect(String(decoding: body.bytes, as: UTF8.self).contains(#"name="a%22b""#))
    }
}
