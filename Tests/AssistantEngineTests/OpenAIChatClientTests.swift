// SPDX-License-Identifier: GPL-2.0-or-later
import AssistantEngine
import Synchronization
import Testing

/// Answers requests from a script of canned responses and records what it was sent.
final class ScriptedTransport: HTTPTransport {
    struct Canned: Sendable {
        var status: Int
        var headers: [String: String] = ["content-type": "text/event-stream"]
        var chunks: [String]
        var failure: HTTPTransportError? = nil
    }

    private let script: Mutex<[Canned]>
    let requests = Mutex<[HTTPRequest]>([])

    init(_ script: [Canned]) {
        self.script = Mutex(script)
    }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        requests.withLock { $0.append(request) }
        let next = script.withLock { $0.isEmpty ? nil : $0.removeFirst() }
        guard let next else { throw HTTPTransportError.connectionFailed("script exhausted") }
        if let failure = next.failure, next.status == 0 { throw failure }
        let (body, continuation) = AsyncThrowingStream.makeStream(of: [UInt8].self, throwing: (any Error).self)
        for chunk in next.chunks { continuation.yield(Array(chunk.utf8)) }
        if let failure = next.failure { continuation.finish(throwing: failure) } else { continuation.finish() }
        return HTTPResponse(status: next.status, headers: next.headers, body: body)
    }

    var count: Int { requests.withLock { $0.count } }
}

/// Records the waits instead of waiting.
final class SleepLog: Sendable {
    let waits = Mutex<[Duration]>([])
    var sleep: @Sendable (Duration) async throws -> Void { { d in self.waits.withLock { $0.append(d) } } }
}

private func sse(_ pieces: [String]) -> [String] {
    pieces.map { #"data: {"choices":[{"delta":{"content":"\#($0)"}}]}"# + "\n\n" } + ["data: [DONE]\n\n"]
}

@Suite("OpenAI chat client", .timeLimit(.minutes(5)))
struct OpenAIChatClientTests {
    private func client(_ transport: ScriptedTransport, _ sleeps: SleepLog, key: String? = "sk-secret-key-123")
        -> OpenAIChatClient
    {
        OpenAIChatClient(
            config: ChatServerConfig(baseURL: "http://example.test/v1/", model: "m", apiKey: key, timeout: .seconds(30)),
            transport: transport, sleep: sleeps.sleep)
    }

    private func ask(_ client: OpenAIChatClient) async throws(AssistantError) -> (String, [String]) {
        let pieces = Mutex<[String]>([])
        let answer = try await client.complete([ChatMessage(.user, "q")]) { p in pieces.withLock { $0.append(p) } }
        return (answer, pieces.withLock { $0 })
    }

    @Test("streams pieces in order and sends a well-formed request")
    func streams() async throws {
        let transport = ScriptedTransport([.init(status: 200, chunks: sse(["Hel", "lo"]))])
        let (answer, pieces) = try await ask(client(transport, SleepLog()))
        #expect(answer == "Hello")
        #expect(pieces == ["Hel", "lo"])
        let request = try #require(transport.requests.withLock { $0.first })
        #expect(request.url == "http://example.test/v1/chat/completions")
        #expect(request.headers.contains { $0.name == "Authorization" && $0.value == "Bearer sk-secret-key-123" })
        let body = String(decoding: request.body, as: UTF8.self)
        #expect(body.contains(#""stream":true"#) && body.contains(#""model":"m""#))
    }

    @Test("a model override goes in the body; without one the configured model does")
    func modelOverride() async throws {
        let transport = ScriptedTransport([.init(status: 200, chunks: sse(["a"])), .init(status: 200, chunks: sse(["b"]))])
        let c = client(transport, SleepLog())
        _ = try await c.complete([ChatMessage(.user, "q")], model: "vision-model") { _ in }
        _ = try await c.complete([ChatMessage(.user, "q")]) { _ in }
        let bodies = transport.requests.withLock { $0.map { String(decoding: $0.body, as: UTF8.self) } }
        #expect(bodies[0].contains(#""model":"vision-model""#) && !bodies[0].contains(#""model":"m""#))
        #expect(bodies[1].contains(#""model":"m""#))
    }

    @Test("429 waits Retry-After, 500 backs off, then success")
    func retries() async throws {
        let transport = ScriptedTransport([
            .init(status: 429, headers: ["retry-after": "3"], chunks: []),
            .init(status: 503, headers: [:], chunks: [#"{"error":{"message":"overloaded"}}"#]),
            .init(status: 200, chunks: sse(["ok"])),
        ])
        let sleeps = SleepLog()
        let (answer, _) = try await ask(client(transport, sleeps))
        #expect(answer == "ok")
        let waits = sleeps.waits.withLock { $0 }
        #expect(waits.count == 2)
        #expect(waits[0] == .seconds(3))
        #expect(waits[1] >= .milliseconds(750) && waits[1] <= .seconds(1))
    }

    @Test("401 is final and names no key; quota exhaustion is final too")
    func finalErrors() async throws {
        let unauthorized = ScriptedTransport([.init(status: 401, chunks: [#"{"error":{"message":"Incorrect API key provided: sk-secr***123"}}"#])])
        await #expect(throws: AssistantError.unauthorized("example.test refused the API key (HTTP 401).")) {
            try await ask(client(unauthorized, SleepLog()))
        }
        #expect(unauthorized.count == 1)
        let quota = ScriptedTransport([.init(status: 429, chunks: [#"{"error":{"type":"insufficient_quota","message":"x"}}"#])])
        await #expect(throws: AssistantError.rateLimited("The account at example.test is out of quota.")) {
            try await ask(client(quota, SleepLog()))
        }
        #expect(quota.count == 1)
    }

    @Test("a stream that fails after text was shown is not retried")
    func midStream() async throws {
        let transport = ScriptedTransport([
            .init(status: 200, chunks: sse(["part"]).dropLast() + [#"data: {"error":{"message":"died"}}"# + "\n\n"]),
            .init(status: 200, chunks: sse(["never"])),
        ])
        await #expect(throws: AssistantError.upstreamFailed("example.test failed: died")) {
            try await ask(client(transport, SleepLog()))
        }
        #expect(transport.count == 1)
    }

    @Test("malformed streams and connection failures are retried a bounded number of times")
    func bounded() async throws {
        let transport = ScriptedTransport(Array(repeating: .init(status: 200, chunks: ["data: {oops\n\n"]), count: 10))
        await #expect(throws: AssistantError.upstreamFailed("example.test sent a malformed answer.")) {
            try await ask(client(transport, SleepLog()))
        }
        #expect(transport.count == RetryPolicy().maxAttempts)
        let refused = ScriptedTransport([.init(status: 0, chunks: [], failure: .connectionFailed("refused"))])
        await #expect(throws: AssistantError.upstreamFailed("Cannot reach example.test: script exhausted")) {
            try await ask(client(refused, SleepLog()))
        }
    }

    @Test("a question cancelled mid-stream fails as cancelled: the cut answer is never returned as whole")
    func cancelledMidStream() async throws {
        // The body yields one piece and stays open, as a slow server's does.
        let (body, continuation) = AsyncThrowingStream.makeStream(of: [UInt8].self, throwing: (any Error).self)
        continuation.yield(Array(sse(["Hel"])[0].utf8))
        let transport = OpenTransport(response: HTTPResponse(status: 200, headers: ["content-type": "text/event-stream"], body: body))
        let c = client(ScriptedTransport([]), SleepLog())
        let streaming = OpenAIChatClient(config: c.config, transport: transport, sleep: SleepLog().sleep)
        let task = Task { () async throws(AssistantError) -> String in
            try await streaming.complete([ChatMessage(.user, "q")]) { _ in
                withUnsafeCurrentTask { $0?.cancel() }
            }
        }
        let result = await task.result
        #expect(throws: AssistantError.upstreamFailed("The question was cancelled.")) { try result.get() }
        continuation.finish()
    }

    @Test("a transport timeout is a Timeout, at once")
    func timeout() async throws {
        let transport = ScriptedTransport([.init(status: 200, chunks: sse(["x"]).prefix(0) + [], failure: .timedOut)])
        await #expect(throws: AssistantError.timeout("No answer from example.test within 30 s.")) {
            try await ask(client(transport, SleepLog()))
        }
        #expect(transport.count == 1)
    }

    @Test("upstream text is cleaned of keys")
    func redaction() {
        let redactor = SecretRedactor(secrets: ["hunter2-long"])
        #expect(redactor.clean("bad key hunter2-long and sk-abc***xyz here") == "bad key [redacted] and [redacted] here")
        #expect(redactor.clean(String(repeating: "a", count: 500)).count == 200)
    }

    @Test("backoff grows, caps and jitters down by at most a quarter")
    func backoff() {
        let policy = RetryPolicy()
        #expect(policy.backoff(after: 0, jitter: 0) == .milliseconds(500))
        #expect(policy.backoff(after: 3, jitter: 0) == .seconds(4))
        #expect(policy.backoff(after: 10, jitter: 0) == .seconds(8))
        #expect(policy.backoff(after: 10, jitter: 1) == .seconds(6))
        #expect(RetryPolicy.retryAfter(["retry-after": " 2 "]) == .seconds(2))
        #expect(RetryPolicy.retryAfter(["retry-after-ms": "250", "retry-after": "9"]) == .milliseconds(250))
        #expect(RetryPolicy.retryAfter(["retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"]) == nil)
        // Hostile values neither trap nor stall.
        for hostile in ["inf", "nan", "1e40", "-1", "1e308"] {
            let wait = RetryPolicy.retryAfter(["retry-after": hostile])
            #expect(wait == nil || wait! <= RetryPolicy.maxRetryAfter, "\(hostile)")
        }
    }
}

@Suite("Secrets", .timeLimit(.minutes(5)))
struct SecretTests {
    @Test("no description, dump or reflection of a config shows its key; the key still works")
    func neverShown() {
        let chat = ChatServerConfig(baseURL: "http://h/v1", model: "m", apiKey: "sk-TOPSECRET-123", timeout: .seconds(1))
        let speech = TranscriptionConfig(baseURL: "http://h/v1", model: "w", apiKey: "sk-TOPSECRET-123", timeout: .seconds(1))
        var dumped = ""
        dump(chat, to: &dumped)
        dump(speech, to: &dumped)
        for text in [String(describing: chat), String(reflecting: chat), String(describing: speech), dumped,
                     String(describing: SecretRedactor(secrets: ["sk-TOPSECRET-123"]))] {
            #expect(!text.contains("TOPSECRET"), "\(text)")
        }
        #expect(chat.apiKey == "sk-TOPSECRET-123")
        #expect(speech.apiKey == "sk-TOPSECRET-123")
    }
}

/// Hands out one response whose body the test controls.
private struct OpenTransport: HTTPTransport {
    let response: HTTPResponse
    func send(_ request: HTTPRequest) async throws -> HTTPResponse { response }
}
