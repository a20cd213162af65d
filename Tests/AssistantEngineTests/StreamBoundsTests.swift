// SPDX-License-Identifier: GPL-2.0-or-later
@testable import AssistantEngine
import Foundation
import Synchronization
import Testing

/// A server whose stream never ends: each read gets `chunk` again.
private final class EndlessTransport: HTTPTransport {
    let chunk: [UInt8]
    let attempts = Mutex(0)

    init(_ chunk: String) { self.chunk = Array(chunk.utf8) }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        attempts.withLock { $0 += 1 }
        let chunk = chunk
        let body = AsyncThrowingStream<[UInt8], any Error>(unfolding: { chunk })
        return HTTPResponse(status: 200, headers: ["content-type": "text/event-stream"], body: body)
    }
}

@Suite("Counts a chat server cannot push past", .timeLimit(.minutes(5)))
struct StreamBoundsTests {
    private func ask(_ transport: any HTTPTransport) async -> AssistantError? {
        let client = OpenAIChatClient(
            config: ChatServerConfig(baseURL: "http://example.test/v1", model: "m", apiKey: nil, timeout: .seconds(30), showAnswerTool: true),
            transport: transport, sleep: SleepLog().sleep)
        do {
            _ = try await client.completion([ChatMessage(.user, "q")]) { _ in }
            return nil
        } catch {
            return error
        }
    }

    @Test("an endless stream of empty data lines, or of events without data, ends in an error, each attempt bounded")
    func endlessEmptiness() async {
        for chunk in [String(repeating: "data:\n", count: 500), "event: message\nid: 7\n\n", "data:\n\n"] {
            let transport = EndlessTransport(chunk)
            let error = await ask(transport)
            #expect(error?.message.contains("malformed stream") == true, "\(chunk.prefix(20)): \(String(describing: error))")
            #expect(transport.attempts.withLock { $0 } >= 1)
        }
    }

    @Test("tool calls with ever more distinct indices are refused past the cap, in a stream and in a whole body")
    func tooManyToolCalls() async throws {
        var calls = ChatToolCalls()
        var usage: TokenUsage?
        for index in 0..<ChatToolCalls.maxCalls {
            let data = #"{"choices":[{"delta":{"tool_calls":[{"index":\#(index),"function":{"name":"f","arguments":""}}]}}]}"#
            #expect(try ChatStreamDecoder.decode(event: data, usage: &usage, toolCalls: &calls) == .nothing)
        }
        let next = #"{"choices":[{"delta":{"tool_calls":[{"index":99999,"function":{"arguments":"{}"}}]}}]}"#
        #expect(throws: ChatStreamDecoder.DecodeError.tooManyToolCalls(ChatToolCalls.maxCalls + 1)) {
            try ChatStreamDecoder.decode(event: next, usage: &usage, toolCalls: &calls)
        }
        // A call already known still takes its pieces.
        try calls.add(index: 0, name: nil, argumentsPiece: "{}")
        #expect(calls.calls.count == ChatToolCalls.maxCalls && calls.calls[0].arguments == "{}")

        let many = Array(repeating: #"{"function":{"name":"f","arguments":"{}"}}"#, count: 10_000).joined(separator: ",")
        let body = #"{"choices":[{"message":{"content":"hi","tool_calls":[\#(many)]}}]}"#
        var whole = ChatToolCalls()
        #expect(throws: ChatStreamDecoder.DecodeError.tooManyToolCalls(ChatToolCalls.maxCalls + 1)) {
            _ = try ChatStreamDecoder.decode(completion: Array(body.utf8), usage: &usage, toolCalls: &whole)
        }

        let endless = EndlessTransport(
            (0..<200).map { #"data: {"choices":[{"delta":{"tool_calls":[{"index":\#($0),"function":{"name":"f"}}]}}]}"# + "\n\n" }
                .joined())
        let error = await ask(endless)
        #expect(error?.message.contains("tool calls") == true, "\(String(describing: error))")
    }
}
