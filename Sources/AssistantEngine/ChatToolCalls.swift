// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation

/// The function calls of one answer, put together from the pieces a stream sends: each
/// `delta.tool_calls[]` entry names its call by `index`, the name usually comes once, and the
/// arguments (a JSON text) arrive split across many events.
public struct ChatToolCalls: Sendable, Equatable {
    public struct Call: Sendable, Equatable {
        public var name: String
        public var arguments: String
    }

    /// Arguments are cut here, as an answer is: a longer one is not a sensible answer, and the
    /// cut JSON then fails to decode, which drops the call.
    static let maxArgumentBytes = 64 * 1024
    /// Distinct calls in one answer: glassd offers one tool, and models that call in parallel
    /// make a handful; past this a server is sending junk indices, each one a dictionary entry.
    public static let maxCalls = 128

    private var byIndex: [Int: Call] = [:]

    public init() {}

    /// The calls in index order.
    public var calls: [Call] { byIndex.sorted { $0.key < $1.key }.map(\.value) }

    public var isEmpty: Bool { byIndex.isEmpty }

    /// One piece of call `index`: a name replaces none, arguments are appended. A new index past
    /// `maxCalls` calls is refused.
    public mutating func add(
        index: Int, name: String?, argumentsPiece: String
    ) throws(ChatStreamDecoder.DecodeError) {
        guard byIndex[index] != nil || byIndex.count < Self.maxCalls else { throw .tooManyToolCalls(byIndex.count + 1) }
        var call = byIndex[index] ?? Call(name: "", arguments: "")
        if let name, !name.isEmpty, call.name.isEmpty { call.name = name }
        if call.arguments.utf8.count + argumentsPiece.utf8.count <= Self.maxArgumentBytes {
            call.arguments += argumentsPiece
        }
        byIndex[index] = call
    }

    /// The `tool_calls` array of a delta or a message, as JSONSerialization gives it. A missing
    /// `index` (a whole message's calls) is the position; arguments sent as an object rather than
    /// the spec's string (some local servers do) are taken as their JSON.
    mutating func add(json: Any?) throws(ChatStreamDecoder.DecodeError) {
        guard let list = json as? [Any] else { return }
        for (position, entry) in list.enumerated() {
            guard let entry = entry as? [String: Any] else { continue }
            let function = entry["function"] as? [String: Any]
            let index = (entry["index"] as? Int) ?? position
            let arguments: String =
                switch function?["arguments"] {
                case let text as String: text
                case let object? where !(object is NSNull): ChatToolCalls.json(object) ?? ""
                default: ""
                }
            try add(index: index, name: function?["name"] as? String, argumentsPiece: arguments)
        }
    }

    private static func json(_ object: Any) -> String? {
        guard JSONSerialization.isValidJSONObject(object),
            let data = try? JSONSerialization.data(withJSONObject: object)
        else { return nil }
        return String(decoding: data, as: UTF8.self)
    }
}
