// SPDX-License-Identifier: GPL-2.0-or-later
import AssistantEngine
import Testing

@Suite("SSE parser", .timeLimit(.minutes(5)))
struct SSEParserTests {
    private func parse(_ chunks: [String]) throws -> [SSEParser.Event] {
        var parser = SSEParser()
        var events = try chunks.flatMap { try parser.feed(Array($0.utf8)) }
        if let last = try parser.finish() { events.append(last) }
        return events
    }

    @Test("events split at every byte boundary parse the same")
    func splitAnywhere() throws {
        let stream = "data: {\"a\":1}\n\n: ping\n\ndata: second\n\ndata: [DONE]\n\n"
        let whole = try parse([stream])
        #expect(whole.map(\.data) == ["{\"a\":1}", "second", "[DONE]"])
        let bytes = Array(stream)
        for cut in 1..<bytes.count {
            #expect(try parse([String(bytes[..<cut]), String(bytes[cut...])]) == whole, "cut at \(cut)")
        }
        #expect(try parse(bytes.map { String($0) }) == whole)
    }

    @Test("CRLF and CR line endings, even with CR and LF in different reads")
    func lineEndings() throws {
        #expect(try parse(["data: a\r\n\r\ndata: b\r\r"]).map(\.data) == ["a", "b"])
        #expect(try parse(["data: a\r", "\n\r", "\ndata: b\r\n\r\n"]).map(\.data) == ["a", "b"])
    }

    @Test("comments and unknown fields are ignored; data lines join with newlines; event names kept")
    func fields() throws {
        let events = try parse([": comment\nid: 7\nretry: 100\nevent: error\ndata: one\ndata:two\nunknown: x\n\n"])
        #expect(events == [SSEParser.Event(event: "error", data: "one\ntwo")])
        #expect(try parse([":\n\n:\n\n"]).isEmpty)
    }

    @Test("an unterminated last event still counts at end of stream")
    func unterminated() throws {
        #expect(try parse(["data: tail"]).map(\.data) == ["tail"])
    }

    @Test("garbage does not crash and long lines stay bounded")
    func garbage() throws {
        var parser = SSEParser(maxLine: 16)
        let junk: [UInt8] = [0xFF, 0xFE, 0x00, 0x0A, 0x0A] + Array(repeating: 0x41, count: 1000) + [0x0A, 0x0A]
        _ = try parser.feed(junk)
        let events = try parser.feed(Array("data: ok\n\n".utf8))
        #expect(events.map(\.data) == ["ok"])
    }

    @Test("endless empty data lines end in a typed error at the cap, not in memory that grows")
    func emptyDataLines() throws {
        var parser = SSEParser()
        let chunk = Array(String(repeating: "data:\n", count: 1_000).utf8)
        var thrown: SSEParser.Failure?
        for _ in 0..<100 where thrown == nil {
            do { _ = try parser.feed(chunk) } catch { thrown = error }
        }
        #expect(thrown == .tooManyDataLines(SSEParser.maxDataLines + 1))
        // Below the cap they are one event of nothing: not dispatched, and the stream goes on.
        var fine = SSEParser()
        let lines = String(repeating: "data:\n", count: 100) + "\ndata: x\n\n"
        #expect(try fine.feed(Array(lines.utf8)).map(\.data) == ["x"])
    }

    @Test("events without data in a row end in a typed error at the cap; an event with data starts the count again")
    func emptyEvents() throws {
        var parser = SSEParser()
        let empty = Array("id: 1\nevent: message\n\ndata:\n\n".utf8)
        var thrown: SSEParser.Failure?
        var fed = 0
        while thrown == nil && fed < 10 * SSEParser.maxEmptyEvents {
            do { #expect(try parser.feed(empty).isEmpty) } catch { thrown = error }
            fed += 2
        }
        #expect(thrown == .tooManyEmptyEvents(SSEParser.maxEmptyEvents))
        // Keep-alive comments never count.
        var keptAlive = SSEParser()
        let almost = String(repeating: "id: 1\n\n", count: SSEParser.maxEmptyEvents - 1)
        let stream = almost + "data: a\n\n" + almost + String(repeating: ": ping\n\n", count: 5_000) + "data: b\n\n"
        #expect(try keptAlive.feed(Array(stream.utf8)).map(\.data) == ["a", "b"])
    }
}

@Suite("Chat stream decoding", .timeLimit(.minutes(5)))
struct ChatStreamDecoderTests {
    @Test("content deltas, role-only deltas, empty choices, [DONE]")
    func pieces() throws {
        #expect(try ChatStreamDecoder.decode(event: #"{"choices":[{"index":0,"delta":{"content":"Hi"}}]}"#) == .text("Hi"))
        #expect(try ChatStreamDecoder.decode(event: #"{"choices":[{"delta":{"role":"assistant","content":""}}]}"#) == .nothing)
        #expect(try ChatStreamDecoder.decode(event: #"{"choices":[],"usage":{"total_tokens":3}}"#) == .nothing)
        #expect(try ChatStreamDecoder.decode(event: " [DONE]") == .done)
        #expect(try ChatStreamDecoder.decode(event: #"{"choices":[{"delta":{"content":"a\u0000b"}}]}"#) == .text("ab"))
    }

    @Test("errors mid-stream in each shape servers use")
    func errors() {
        #expect(throws: ChatStreamDecoder.DecodeError.upstream("overloaded")) {
            try ChatStreamDecoder.decode(event: #"{"error":{"message":"overloaded","type":"server_error"}}"#)
        }
        #expect(throws: ChatStreamDecoder.DecodeError.upstream("boom")) {
            try ChatStreamDecoder.decode(event: #"{"error":"boom"}"#)
        }
        #expect(throws: ChatStreamDecoder.DecodeError.upstream("old vllm")) {
            try ChatStreamDecoder.decode(event: #"{"object":"error","message":"old vllm","code":400}"#)
        }
        #expect(throws: ChatStreamDecoder.DecodeError.malformed) { try ChatStreamDecoder.decode(event: "{not json") }
        #expect(throws: ChatStreamDecoder.DecodeError.malformed) { try ChatStreamDecoder.decode(event: "[1,2]") }
    }

    @Test("`event: error` fails whatever its data; a refusal is shown as the answer")
    func errorEventsAndRefusals() throws {
        #expect(throws: ChatStreamDecoder.DecodeError.upstream("quota")) {
            try ChatStreamDecoder.decode(SSEParser.Event(event: "error", data: #"{"error":{"message":"quota"}}"#))
        }
        #expect(throws: ChatStreamDecoder.DecodeError.upstream("plain text")) {
            try ChatStreamDecoder.decode(SSEParser.Event(event: "error", data: "plain text"))
        }
        #expect(try ChatStreamDecoder.decode(event: #"{"choices":[{"delta":{"refusal":"I can't help with that."}}]}"#) == .text("I can't help with that."))
    }

    @Test("the displayed backend carries no credentials or query")
    func publicDescription() {
        let config = ChatServerConfig(baseURL: "https://user:pw@example.test/v1?key=abc#x", model: "m", apiKey: "k", timeout: .seconds(1))
        #expect(config.publicDescription == "https://example.test/v1 m")
    }

    @Test("a whole chat.completion body")
    func completion() throws {
        let body = Array(#"{"choices":[{"message":{"role":"assistant","content":"Whole"}}]}"#.utf8)
        #expect(try ChatStreamDecoder.decode(completion: body) == "Whole")
        #expect(ChatStreamDecoder.errorType(body: Array(#"{"error":{"type":"insufficient_quota"}}"#.utf8)) == "insufficient_quota")
    }
}
