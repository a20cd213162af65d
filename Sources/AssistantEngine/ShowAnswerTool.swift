// SPDX-License-Identifier: GPL-2.0-or-later
import AnswerModel
import Foundation
import Synchronization

/// The `show_answer` function tool: how an OpenAI-compatible model hands glassd a typed answer
/// (list, table, link, place, number) instead of prose the glasses would have to guess at.
enum ShowAnswerTool {
    static let name = "show_answer"

    /// The tool's JSON, written once: it goes into every request, so it is not rebuilt per turn.
    /// Kept small (every token of it is paid on each question) and free of `oneOf`, which some
    /// local servers' grammar builders reject; the per-kind fields are listed and described.
    static let definition: [UInt8] = Array(
        #"""
        {"type":"function","function":{"name":"show_answer","description":"Show the answer on the glasses in a structured form. Call it only when the answer is a list, a table, a link, a place or a number; otherwise answer in plain text as usual.","parameters":{"type":"object","properties":{"parts":{"type":"array","minItems":1,"items":{"type":"object","properties":{"kind":{"type":"string","enum":["text","list","table","link","place","number"]},"text":{"type":"string","description":"text, link"},"title":{"type":"string","description":"list"},"items":{"type":"array","items":{"type":"string"},"description":"list"},"columns":{"type":"array","items":{"type":"string"},"description":"table"},"rows":{"type":"array","items":{"type":"array","items":{"type":"string"}},"description":"table: one string per column"},"url":{"type":"string","description":"link"},"name":{"type":"string","description":"place"},"latitude":{"type":"number","description":"place"},"longitude":{"type":"number","description":"place"},"value":{"type":"number","description":"number"},"unit":{"type":"string","description":"number; empty if none"}},"required":["kind"]}}},"required":["parts"]}}}
        """#.utf8)

    /// The typed answer in a call's arguments (`{"parts":[...]}`); nil unless every part decodes
    /// and there is at least one: a half-understood call is worse than the model's text. One with
    /// a NUL anywhere (its text form holds every string) is refused too: NUL cannot travel on
    /// D-Bus nor into SQLite, and the content is there to fall back on.
    static func answer(arguments: String) -> TypedAnswer? {
        guard let decoded = try? JSONDecoder().decode(Arguments.self, from: Data(arguments.utf8)),
            !decoded.parts.isEmpty
        else { return nil }
        let answer = TypedAnswer(decoded.parts)
        return answer.textForm.contains("\u{0}") ? nil : answer
    }

    private struct Arguments: Decodable {
        var parts: [AnswerPart]
    }
}

/// Whether a chat server takes `tools`, shared by every copy of one client; as
/// StreamOptionsSupport: a server that refuses them (400 naming them) is asked again at once
/// without, and never offered them again, so each question does not pay a refused round trip.
final class ShowAnswerToolSupport: Sendable {
    private let refused = Mutex(false)

    var accepted: Bool { !refused.withLock { $0 } }

    func markRefused() {
        refused.withLock { $0 = true }
    }

    /// Whether an HTTP 400's body is about the tool (`tools`, `tool_choice`, or functions).
    static func isRefusal(status: Int, body: [UInt8]) -> Bool {
        guard status == 400 else { return false }
        let text = String(decoding: body, as: UTF8.self).lowercased()
        return text.contains("tool") || text.contains("function")
    }
}
