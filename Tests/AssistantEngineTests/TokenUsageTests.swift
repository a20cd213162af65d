// SPDX-License-Identifier: GPL-2.0-or-later
import AssistantEngine
import Foundation
import Synchronization
import Testing

/// A stream of `pieces`, then (when given) the extra chunks servers end with, then [DONE].
private func stream(_ pieces: [String], ending: [String] = []) -> [String] {
    pieces.map { #"data: {"choices":[{"index":0,"delta":{"content":"\#($0)"}}],"usage":null}"# + "\n\n" }
        + ending.map { "data: \($0)\n\n" } + ["data: [DONE]\n\n"]
}

private let usageChunk = #"{"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":5,"total_tokens":17}}"#

@Suite("Token usage in chat streams", .timeLimit(.minutes(5)))
struct TokenUsageDecodingTests {
    @Test("the usage chunk of include_usage (choices: []) is read; usage: null and no usage leave it alone")
    func finalChunk() throws {
        var usage: TokenUsage?
        #expect(try ChatStreamDecoder.decode(event: #"{"choices":[{"delta":{"content":"Hi"}}],"usage":null}"#, usage: &usage) == .text("Hi"))
        #expect(usage == nil)
        #expect(try ChatStreamDecoder.decode(event: usageChunk, usage: &usage) == .nothing)
        #expect(usage == TokenUsage(promptTokens: 12, completionTokens: 5))
        #expect(usage?.total == 17)
        #expect(try ChatStreamDecoder.decode(event: #"{"choices":[{"delta":{}}],"usage":null}"#, usage: &usage) == .nothing)
        #expect(try ChatStreamDecoder.decode(event: "[DONE]", usage: &usage) == .done)
        #expect(usage == TokenUsage(promptTokens: 12, completionTokens: 5))
    }

    @Test("usage on the last content chunk (some servers send it there) comes with its text")
    func onContentChunk() throws {
        var usage: TokenUsage?
        let chunk = #"{"choices":[{"delta":{"content":"end"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}"#
        #expect(try ChatStreamDecoder.decode(event: chunk, usage: &usage) == .text("end"))
        #expect(usage == TokenUsage(promptTokens: 3, completionTokens: 1))
    }

    @Test("a usage object that is not a count is no report")
    func unusable() throws {
        for bad in [#""usage":{"prompt_tokens":-1,"completion_tokens":2}"#, #""usage":{"prompt_tokens":"3"}"#,
                    #""usage":{"total_tokens":9}"#, #""usage":[1,2]"#, #""usage":{"prompt_tokens":1.5}"#] {
            var usage: TokenUsage?
            _ = try ChatStreamDecoder.decode(event: #"{"choices":[],"# + bad + "}", usage: &usage)
            #expect(usage == nil, "\(bad)")
        }
        var partial: TokenUsage?
        _ = try ChatStreamDecoder.decode(event: #"{"choices":[],"usage":{"prompt_tokens":7}}"#, usage: &partial)
        #expect(partial == TokenUsage(promptTokens: 7, completionTokens: 0))
    }

    @Test("a whole chat.completion's usage is read too")
    func completionBody() throws {
        var usage: TokenUsage?
        let body = Array(#"{"choices":[{"message":{"content":"Whole"}}],"usage":{"prompt_tokens":8,"completion_tokens":2,"total_tokens":10}}"#.utf8)
        #expect(try ChatStreamDecoder.decode(completion: body, usage: &usage) == "Whole")
        #expect(usage == TokenUsage(promptTokens: 8, completionTokens: 2))
    }
}

@Suite("Token usage from the chat client", .timeLimit(.minutes(5)))
struct TokenUsageClientTests {
    private func client(_ transport: ScriptedTransport, _ sleeps: SleepLog) -> OpenAIChatClient {
        OpenAIChatClient(
            config: ChatServerConfig(baseURL: "http://example.test/v1", model: "m", apiKey: nil, timeout: .seconds(30)),
            transport: transport, sleep: sleeps.sleep)
    }

    private func bodies(_ transport: ScriptedTransport) -> [String] {
        transport.requests.withLock { $0.map { String(decoding: $0.body, as: UTF8.self) } }
    }

    @Test("the request asks for usage and the answer carries it; a server that ignores the option gives none")
    func reported() async throws {
        let transport = ScriptedTransport([
            .init(status: 200, chunks: stream(["Hel", "lo"], ending: [usageChunk])),
            .init(status: 200, chunks: stream(["Hi"])),
        ])
        let c = client(transport, SleepLog())
        let first = try await c.completion([ChatMessage(.user, "q")]) { _ in }
        #expect(first == ChatCompletion(text: "Hello", usage: TokenUsage(promptTokens: 12, completionTokens: 5)))
        let second = try await c.completion([ChatMessage(.user, "q")]) { _ in }
        #expect(second == ChatCompletion(text: "Hi", usage: nil))
        #expect(bodies(transport).allSatisfy { $0.contains(#""stream_options":{"include_usage":true}"#) })
    }

    @Test("a server that refuses stream_options is asked again at once without it, and never again with it")
    func refused() async throws {
        let refusal = #"{"error":{"message":"Unrecognized request argument supplied: stream_options","type":"invalid_request_error","param":"stream_options","code":null}}"#
        let transport = ScriptedTransport([
            .init(status: 400, headers: ["content-type": "application/json"], chunks: [refusal]),
            .init(status: 200, chunks: stream(["ok"])),
            .init(status: 200, chunks: stream(["again"])),
        ])
        let sleeps = SleepLog()
        let c = client(transport, sleeps)
        #expect(try await c.completion([ChatMessage(.user, "q")]) { _ in } == ChatCompletion(text: "ok", usage: nil))
        // A copy of the client is the same client: it remembers too.
        let copy = c
        #expect(try await copy.complete([ChatMessage(.user, "q")]) { _ in } == "again")
        let sent = bodies(transport)
        #expect(sent.count == 3)
        #expect(sent[0].contains("stream_options"))
        #expect(!sent[1].contains("stream_options") && !sent[2].contains("stream_options"))
        #expect(sleeps.waits.withLock { $0 } == [.zero])
    }

    @Test("another 400 is final, as before")
    func otherBadRequest() async throws {
        let transport = ScriptedTransport([
            .init(status: 400, headers: ["content-type": "application/json"], chunks: [#"{"error":{"message":"bad model"}}"#])
        ])
        await #expect(throws: AssistantError.upstreamFailed("example.test answered HTTP 400: bad model")) {
            try await client(transport, SleepLog()).completion([ChatMessage(.user, "q")]) { _ in }
        }
        #expect(transport.count == 1)
    }
}
