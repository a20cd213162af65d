// SPDX-License-Identifier: GPL-2.0-or-later
@testable import AnswerModel
@testable import AssistantEngine
import Foundation
import Synchronization
import Testing

/// One streamed chunk's `data:` line holding `delta`.
private func event(_ delta: String) -> String { #"data: {"choices":[{"index":0,"delta":\#(delta)}]}"# + "\n\n" }

/// A tool call's arguments as the stream sends them: the name first, the JSON in `pieces`.
private func toolCall(_ arguments: String, pieces: Int, name: String = "show_answer") -> [String] {
    let escaped = arguments.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
    let chars = Array(escaped)
    var cuts: [String] = []
    let size = (chars.count + pieces - 1) / pieces
    var i = 0
    while i < chars.count {
        // Never cut an escape in two: a real server sends whole JSON strings per event.
        var end = min(i + size, chars.count)
        while end < chars.count, chars[end - 1] == "\\" { end += 1 }
        cuts.append(String(chars[i..<end]))
        i = end
    }
    let first = event(#"{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"\#(name)","arguments":""}}]}"#)
    return [first] + cuts.map { event(#"{"tool_calls":[{"index":0,"function":{"arguments":"\#($0)"}}]}"#) }
}

private let done = ["data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n", "data: [DONE]\n\n"]
private let tableArguments = #"{"parts":[{"kind":"table","columns":["City","Pop"],"rows":[["Oslo","0.7M"],["Bergen","0.3M"]]}]}"#

@Suite("show_answer tool", .timeLimit(.minutes(5)))
struct ShowAnswerTests {
    private func client(_ transport: ScriptedTransport, tool: Bool = true) -> OpenAIChatClient {
        OpenAIChatClient(
            config: ChatServerConfig(baseURL: "http://example.test/v1", model: "m", apiKey: nil, timeout: .seconds(30), showAnswerTool: tool),
            transport: transport, sleep: SleepLog().sleep)
    }

    private func ask(_ client: OpenAIChatClient) async throws(AssistantError) -> (ChatCompletion, [AnswerPiece]) {
        let pieces = Mutex<[AnswerPiece]>([])
        let answer = try await client.completion([ChatMessage(.user, "q")]) { p in pieces.withLock { $0.append(p) } }
        return (answer, pieces.withLock { $0 })
    }

    private func bodies(_ transport: ScriptedTransport) throws -> [[String: Any]] {
        try transport.requests.withLock { $0 }.map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.body)) as? [String: Any])
        }
    }

    @Test("the tool's JSON parses, names show_answer and lists every kind")
    func definition() throws {
        let tool = try #require(try JSONSerialization.jsonObject(with: Data(ShowAnswerTool.definition)) as? [String: Any])
        let function = try #require(tool["function"] as? [String: Any])
        #expect(tool["type"] as? String == "function" && function["name"] as? String == "show_answer")
        let parts = try #require((function["parameters"] as? [String: Any])?["properties"] as? [String: Any])["parts"] as? [String: Any]
        #expect(parts?["minItems"] as? Int == 1)
        let kind = ((parts?["items"] as? [String: Any])?["properties"] as? [String: Any])?["kind"] as? [String: Any]
        #expect(kind?["enum"] as? [String] == ["text", "list", "table", "link", "place", "number"])
    }

    @Test("the request offers the tool with tool_choice auto when on, and not when off")
    func requestBody() throws {
        for on in [true, false] {
            let bytes = ChatRequestBody.encode(model: "m", messages: [ChatMessage(.user, "q")], showAnswerTool: on)
            let body = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
            let tools = body["tools"] as? [[String: Any]]
            #expect((tools?.first?["function"] as? [String: Any])?["name"] as? String == (on ? "show_answer" : nil))
            #expect(body["tool_choice"] as? String == (on ? "auto" : nil))
            #expect(body["stream"] as? Bool == true)
        }
    }

    @Test("a streamed call split over events gives a typed table, its text form sent once at the end, marked as such")
    func streamedTable() async throws {
        let transport = ScriptedTransport([.init(status: 200, chunks: toolCall(tableArguments, pieces: 5) + done)])
        let (answer, pieces) = try await ask(client(transport))
        #expect(answer.typed == TypedAnswer([.table(columns: ["City", "Pop"], rows: [["Oslo", "0.7M"], ["Bergen", "0.3M"]])]))
        #expect(answer.text == "City | Pop\nOslo | 0.7M\nBergen | 0.3M")
        #expect(pieces == [.textForm(answer.text, of: try #require(answer.typed))])
        let tools = try bodies(transport)[0]["tools"] as? [Any]
        #expect(tools?.count == 1)
    }

    @Test("list and number calls decode to their kinds")
    func listAndNumber() async throws {
        let list = #"{"parts":[{"kind":"list","title":"Planets","items":["Mercury","Venus"]}]}"#
        let number = #"{"parts":[{"kind":"number","value":8848.86,"unit":"m"}]}"#
        let transport = ScriptedTransport([
            .init(status: 200, chunks: toolCall(list, pieces: 3) + done),
            .init(status: 200, chunks: toolCall(number, pieces: 4) + done),
        ])
        let c = client(transport)
        let (first, _) = try await ask(c)
        #expect(first.typed == TypedAnswer([.list(title: "Planets", items: ["Mercury", "Venus"])]))
        #expect(first.text == "Planets\n1. Mercury\n2. Venus")
        let (second, _) = try await ask(c)
        #expect(second.typed == TypedAnswer([.number(value: 8848.86, unit: "m")]))
        #expect(second.text == "8848.86 m")
    }

    @Test("content then a call: the content streams as text as it comes, the text form follows it marked as such")
    func contentAndCall() async throws {
        let chunks = [event(#"{"content":"Here:"}"#)] + toolCall(tableArguments, pieces: 3) + done
        let (answer, pieces) = try await ask(client(ScriptedTransport([.init(status: 200, chunks: chunks)])))
        // The text form's piece carries the parts it is the text form of (not the streamed lead).
        let table = TypedAnswer(Array(try #require(answer.typed).parts.dropFirst()))
        #expect(pieces == [.text("Here:"), .textForm("\nCity | Pop\nOslo | 0.7M\nBergen | 0.3M", of: table)])
        #expect(answer.text == pieces.map(\.text).joined())
        #expect(answer.typed?.parts.first == .text("Here:"))
        #expect(answer.typed?.kind == "table")
    }

    @Test("malformed arguments, an unknown kind or another tool's call leave the plain text")
    func malformed() async throws {
        let bad = [
            #"{"parts":[{"kind":"table","columns":["a"]"#,  // cut short
            #"{"parts":[{"kind":"chart","values":[1]}]}"#,
            #"{"parts":[{"kind":"number","value":"many","unit":""}]}"#,
            #"{"parts":[]}"#,
            #"{"parts":[{"kind":"text","text":"a\u0000b"}]}"#,
        ]
        for arguments in bad {
            let chunks = [event(#"{"content":"Plain answer."}"#)] + toolCall(arguments, pieces: 3) + done
            let (answer, pieces) = try await ask(client(ScriptedTransport([.init(status: 200, chunks: chunks)])))
            #expect(answer.typed == nil && answer.text == "Plain answer." && pieces == [.text("Plain answer.")], "\(arguments)")
        }
        let other = [event(#"{"content":"Plain."}"#)] + toolCall(tableArguments, pieces: 2, name: "get_weather") + done
        let (answer, _) = try await ask(client(ScriptedTransport([.init(status: 200, chunks: other)])))
        #expect(answer.typed == nil && answer.text == "Plain.")
    }

    @Test("a call the client did not offer is ignored")
    func notOffered() async throws {
        let chunks = [event(#"{"content":"Plain."}"#)] + toolCall(tableArguments, pieces: 2) + done
        let transport = ScriptedTransport([.init(status: 200, chunks: chunks)])
        let (answer, _) = try await ask(client(transport, tool: false))
        #expect(answer.typed == nil && answer.text == "Plain.")
        #expect(try bodies(transport)[0]["tools"] == nil)
    }

    @Test("a 400 refusing tools is asked again at once without them, and the next question goes without")
    func refusal() async throws {
        let refusal = #"{"error":{"message":"tools are not supported","type":"invalid_request_error","param":"tools"}}"#
        let sse = [event(#"{"content":"ok"}"#), "data: [DONE]\n\n"]
        let transport = ScriptedTransport([
            .init(status: 400, headers: ["content-type": "application/json"], chunks: [refusal]),
            .init(status: 200, chunks: sse), .init(status: 200, chunks: sse),
        ])
        let sleeps = SleepLog()
        let c = OpenAIChatClient(
            config: ChatServerConfig(baseURL: "http://example.test/v1", model: "m", apiKey: nil, timeout: .seconds(30), showAnswerTool: true),
            transport: transport, sleep: sleeps.sleep)
        #expect(try await ask(c).0.text == "ok")
        #expect(try await ask(c).0.text == "ok")
        let sent = try bodies(transport)
        #expect(sent.map { $0["tools"] != nil } == [true, false, false])
        #expect(sent.map { $0["tool_choice"] != nil } == [true, false, false])
        // Usage is still asked for: only the tool was refused.
        #expect(sent.allSatisfy { $0["stream_options"] != nil })
        #expect(sleeps.waits.withLock { $0 }.allSatisfy { $0 == .zero })
    }

    @Test("a 400 about something else is not taken for a tool refusal")
    func otherBadRequest() async throws {
        let other = #"{"error":{"message":"context length exceeded","type":"invalid_request_error"}}"#
        let transport = ScriptedTransport([.init(status: 400, chunks: [other])])
        await #expect(throws: AssistantError.self) { try await ask(client(transport)) }
        #expect(transport.count == 1)
    }

    @Test("a whole JSON completion with message.tool_calls gives the typed answer; its content comes as text, the text form apart")
    func wholeCompletion() async throws {
        let escaped = tableArguments.replacingOccurrences(of: "\"", with: "\\\"")
        let body = #"{"object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"show_answer","arguments":"\#(escaped)"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":5,"completion_tokens":7,"total_tokens":12}}"#
        let transport = ScriptedTransport([.init(status: 200, headers: ["content-type": "application/json"], chunks: [body])])
        let (answer, pieces) = try await ask(client(transport))
        #expect(answer.typed?.kind == "table")
        #expect(answer.text == "City | Pop\nOslo | 0.7M\nBergen | 0.3M")
        #expect(pieces == [.textForm(answer.text, of: try #require(answer.typed))])
        #expect(answer.usage != nil)
        let withContent = body.replacingOccurrences(of: #""content":null"#, with: #""content":"Here:""#)
        let both = ScriptedTransport([.init(status: 200, headers: ["content-type": "application/json"], chunks: [withContent])])
        let (second, secondPieces) = try await ask(client(both))
        let typed = try #require(second.typed)
        #expect(secondPieces == [.text("Here:"), .textForm("\nCity | Pop\nOslo | 0.7M\nBergen | 0.3M", of: TypedAnswer(Array(typed.parts.dropFirst())))])
        #expect(second.text == secondPieces.map(\.text).joined())
    }

    @Test("tool-call pieces accumulate by index; arguments sent as an object are taken as JSON")
    func accumulator() throws {
        var calls = ChatToolCalls()
        var usage: TokenUsage?
        let events = [
            #"{"choices":[{"delta":{"tool_calls":[{"index":1,"function":{"name":"b","arguments":"{\"x\""}}]}}]}"#,
            #"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"name":"a","arguments":""}}]}}]}"#,
            #"{"choices":[{"delta":{"tool_calls":[{"index":1,"function":{"arguments":":1}"}}]}}]}"#,
        ]
        for data in events { #expect(try ChatStreamDecoder.decode(event: data, usage: &usage, toolCalls: &calls) == .nothing) }
        #expect(calls.calls == [.init(name: "a", arguments: ""), .init(name: "b", arguments: #"{"x":1}"#)])
        var whole = ChatToolCalls()
        let body = #"{"choices":[{"message":{"content":"","tool_calls":[{"function":{"name":"show_answer","arguments":{"parts":[{"kind":"text","text":"hi"}]}}}]}}]}"#
        _ = try ChatStreamDecoder.decode(completion: Array(body.utf8), usage: &usage, toolCalls: &whole)
        #expect(ShowAnswerTool.answer(arguments: try #require(whole.calls.first).arguments) == .text("hi"))
    }
}
