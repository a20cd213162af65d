// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation

/// Turns chat-completion payloads (SSE `data:` events, or a whole non-streamed body) into text.
/// Tolerates what OpenAI-compatible servers send: usage chunks with empty `choices`, role-only
/// deltas, extra fields, and errors as an object, a string, or vLLM's top-level shape.
public enum ChatStreamDecoder {
    public enum Piece: Sendable, Equatable {
        case text(String)
        case done
        case nothing
    }

    public enum DecodeError: Error, Sendable, Equatable {
        case malformed
        case upstream(String)
        /// A new call past `ChatToolCalls.maxCalls` (the count it would have made).
        case tooManyToolCalls(Int)
    }

    /// One SSE event (`event: error` is a failure whatever its data).
    public static func decode(_ event: SSEParser.Event) throws(DecodeError) -> Piece {
        var ignored: TokenUsage?
        return try decode(event, usage: &ignored)
    }

    /// One SSE event; a token report it carries goes into `usage`, left as it was otherwise.
    public static func decode(_ event: SSEParser.Event, usage: inout TokenUsage?) throws(DecodeError) -> Piece {
        if event.event == "error" {
            let object = try? parseObject(event.data)
            throw .upstream(object.flatMap(errorMessage(in:)) ?? (event.data.isEmpty ? "stream error" : event.data))
        }
        return try decode(event: event.data, usage: &usage)
    }

    /// One SSE event's data.
    public static func decode(event data: String) throws(DecodeError) -> Piece {
        var ignored: TokenUsage?
        return try decode(event: data, usage: &ignored)
    }

    /// One SSE event's data; a token report goes into `usage`. With `include_usage` it comes in a
    /// last chunk of its own (`choices: []`); some servers put it on the last content chunk
    /// instead, and the rest send `usage: null` or nothing, which leaves `usage` alone.
    public static func decode(event data: String, usage: inout TokenUsage?) throws(DecodeError) -> Piece {
        var ignored = ChatToolCalls()
        return try decode(event: data, usage: &usage, toolCalls: &ignored)
    }

    /// One SSE event; its `delta.tool_calls` pieces go into `toolCalls` (an event with only
    /// those is `.nothing`: the calls are whole only at the end of the stream).
    public static func decode(
        _ event: SSEParser.Event, usage: inout TokenUsage?, toolCalls: inout ChatToolCalls
    ) throws(DecodeError) -> Piece {
        if event.event == "error" {
            var ignored: TokenUsage?
            return try decode(event, usage: &ignored)
        }
        return try decode(event: event.data, usage: &usage, toolCalls: &toolCalls)
    }

    /// One SSE event's data, with its tool-call pieces going into `toolCalls`.
    public static func decode(
        event data: String, usage: inout TokenUsage?, toolCalls: inout ChatToolCalls
    ) throws(DecodeError) -> Piece {
        let trimmed = data.trimmingCharacters(in: .whitespaces)
        if trimmed == "[DONE]" { return .done }
        let object = try parseObject(trimmed)
        if let message = errorMessage(in: object) { throw .upstream(message) }
        if let reported = TokenUsage(json: object["usage"]) { usage = reported }
        guard let choices = object["choices"] as? [Any] else {
            // Chunks without choices carry usage or metadata only.
            return .nothing
        }
        var text = ""
        for case let choice as [String: Any] in choices {
            guard let delta = choice["delta"] as? [String: Any] else { continue }
            // A refusal is the model's answer too: show it rather than retry for nothing.
            if let content = delta["content"] as? String { text += content }
            if let refusal = delta["refusal"] as? String { text += refusal }
            try toolCalls.add(json: delta["tool_calls"])
        }
        text = sanitized(text)
        return text.isEmpty ? .nothing : .text(text)
    }

    /// A non-streamed `chat.completion` body (servers that ignore `stream: true`).
    public static func decode(completion body: [UInt8]) throws(DecodeError) -> String {
        var ignored: TokenUsage?
        return try decode(completion: body, usage: &ignored)
    }

    /// A non-streamed `chat.completion` body; its `usage`, if reported, goes into `usage`.
    public static func decode(completion body: [UInt8], usage: inout TokenUsage?) throws(DecodeError) -> String {
        var ignored = ChatToolCalls()
        return try decode(completion: body, usage: &usage, toolCalls: &ignored)
    }

    /// A non-streamed body; its `message.tool_calls` go into `toolCalls` (the text is then
    /// often empty: `content` is null beside calls).
    public static func decode(
        completion body: [UInt8], usage: inout TokenUsage?, toolCalls: inout ChatToolCalls
    ) throws(DecodeError) -> String {
        let object = try parseObject(String(decoding: body, as: UTF8.self))
        if let message = errorMessage(in: object) { throw .upstream(message) }
        if let reported = TokenUsage(json: object["usage"]) { usage = reported }
        guard let choices = object["choices"] as? [[String: Any]],
            let message = choices.first?["message"] as? [String: Any]
        else { throw .malformed }
        try toolCalls.add(json: message["tool_calls"])
        return sanitized((message["content"] as? String) ?? (message["refusal"] as? String) ?? "")
    }

    /// NUL cannot travel in a D-Bus string nor survive SQLite's C API: drop it from upstream text.
    static func sanitized(_ text: String) -> String {
        text.contains("\u{0}") ? text.replacingOccurrences(of: "\u{0}", with: "") : text
    }

    /// The human message of an error body, whatever its shape; nil if it is not one.
    public static func errorMessage(body: [UInt8]) -> String? {
        guard let object = try? parseObject(String(decoding: body, as: UTF8.self)) else { return nil }
        return errorMessage(in: object)
    }

    /// The `error.type` of an error body (`insufficient_quota` matters: it must not be retried).
    public static func errorType(body: [UInt8]) -> String? {
        guard let object = try? parseObject(String(decoding: body, as: UTF8.self)),
            let error = object["error"] as? [String: Any]
        else { return nil }
        return (error["type"] as? String) ?? (error["code"] as? String)
    }

    private static func parseObject(_ text: String) throws(DecodeError) -> [String: Any] {
        guard let data = text.data(using: .utf8),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { throw .malformed }
        return object
    }

    private static func errorMessage(in object: [String: Any]) -> String? {
        if let error = object["error"] as? [String: Any] {
            return (error["message"] as? String) ?? (error["code"].map { "\($0)" }) ?? "unknown error"
        }
        if let error = object["error"] as? String { return error }
        if object["object"] as? String == "error" { return object["message"] as? String ?? "unknown error" }
        return nil
    }
}
