// SPDX-License-Identifier: GPL-2.0-or-later

/// Any JSON value: what the start request passes through to the graph (`properties`), and what the
/// agent's messages are read into before their shape is checked. Integers stay integers, so a port
/// goes out as `8765`, not `8765.0`.
public enum AgentJSON: Sendable, Equatable, Codable {
    case null
    case bool(Bool)
    case number(Double)
    case integer(Int64)
    case string(String)
    case array([AgentJSON])
    case object([String: AgentJSON])

    public init(from decoder: any Decoder) throws {
        let value = try decoder.singleValueContainer()
        if value.decodeNil() {
            self = .null
        } else if let bool = try? value.decode(Bool.self) {
            self = .bool(bool)
        } else if let integer = try? value.decode(Int64.self) {
            self = .integer(integer)
        } else if let number = try? value.decode(Double.self) {
            self = .number(number)
        } else if let string = try? value.decode(String.self) {
            self = .string(string)
        } else if let array = try? value.decode([AgentJSON].self) {
            self = .array(array)
        } else {
            self = .object(try value.decode([String: AgentJSON].self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var value = encoder.singleValueContainer()
        switch self {
        case .null: try value.encodeNil()
        case .bool(let b): try value.encode(b)
        case .number(let n): try value.encode(n)
        case .integer(let i): try value.encode(i)
        case .string(let s): try value.encode(s)
        case .array(let a): try value.encode(a)
        case .object(let o): try value.encode(o)
        }
    }
}

// Reading a decoded message without a Codable type per shape: the server's JSON is loose.
extension AgentJSON {
    public subscript(key: String) -> AgentJSON? {
        if case .object(let o) = self { return o[key] }
        return nil
    }

    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    /// A whole number, whether sent as an integer, a float without a fraction, or a numeric string.
    public var integerValue: Int64? {
        switch self {
        case .integer(let i): return i
        case .number(let n):
            // Range-checked first: Int64(Double) traps outside it.
            guard n.rounded() == n, n >= -9.2e18, n <= 9.2e18 else { return nil }
            return Int64(n)
        case .string(let s): return Int64(s)
        default: return nil
        }
    }

    /// true/false, or 1/0 as some senders write it.
    public var boolValue: Bool? {
        switch self {
        case .bool(let b): return b
        case .integer(let i): return i != 0
        case .string("true"): return true
        case .string("false"): return false
        default: return nil
        }
    }
}

extension AgentJSON: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(floatLiteral value: Double) { self = .number(value) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(arrayLiteral elements: AgentJSON...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, AgentJSON)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}
