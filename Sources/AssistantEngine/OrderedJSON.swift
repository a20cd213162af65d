// SPDX-License-Identifier: GPL-2.0-or-later

/// A JSON value whose objects keep their members in document order. Foundation's readers on
/// Linux (JSONSerialization, JSONDecoder's `allKeys`) both lose it, and SUSI's table columns are
/// an object whose order is the column order.
indirect enum OrderedJSON: Sendable, Equatable {
    case null
    case bool(Bool)
    /// The literal as written, so "3" stays "3" and not "3.0" when shown.
    case number(String)
    case string(String)
    case array([OrderedJSON])
    case object([Member])

    struct Member: Sendable, Equatable {
        var key: String
        var value: OrderedJSON
    }

    /// A member's value; with duplicate keys the last one, as most readers do.
    subscript(key: String) -> OrderedJSON? {
        guard case .object(let members) = self else { return nil }
        return members.last { $0.key == key }?.value
    }

    var members: [Member]? {
        if case .object(let members) = self { members } else { nil }
    }

    var array: [OrderedJSON]? {
        if case .array(let items) = self { items } else { nil }
    }

    var string: String? {
        if case .string(let text) = self { text } else { nil }
    }

    /// A number, or a string holding one (SUSI skills send coordinates and counts both ways).
    var double: Double? {
        switch self {
        case .number(let literal): Double(literal)
        case .string(let text): Double(text.trimmingWhitespace)
        default: nil
        }
    }

    /// A scalar as text for showing; nil for null, arrays and objects.
    var scalarText: String? {
        switch self {
        case .string(let text): text
        case .number(let literal): literal
        case .bool(let value): value ? "true" : "false"
        case .null, .array, .object: nil
        }
    }

    struct ParseError: Error, Equatable {
        var offset: Int
    }

    /// Parses one JSON document (RFC 8259), nested at most `maxDepth` deep.
    static func parse(_ bytes: [UInt8], maxDepth: Int = 64) throws(ParseError) -> OrderedJSON {
        var reader = OrderedJSONReader(bytes: bytes, maxDepth: maxDepth)
        let value = try reader.value(depth: 0)
        reader.skipSpace()
        guard reader.at == bytes.count else { throw ParseError(offset: reader.at) }
        return value
    }
}
