// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation

/// Swift spellings: identifiers, types, and the expressions that read and write values.
enum Emit {
    /// Types the generated namespaces declare themselves; no member may be named so.
    static let reservedTypeNames = [
        "Method", "Property", "Signal", "Member", "Proxy", "PropertySpec", "Properties",
    ]

    private static let keywords: Set<String> = [
        "as", "associatedtype", "break", "case", "catch", "class", "continue", "default", "defer", "deinit", "do", "else",
        "enum", "extension", "fallthrough", "false", "fileprivate", "final", "for", "func", "guard", "if", "import", "in",
        "init", "inout", "internal", "is", "let", "nil", "open", "operator", "private", "protocol", "public", "repeat",
        "rethrows", "return", "self", "Self", "static", "struct", "subscript", "super", "switch", "throw", "throws", "true",
        "try", "typealias", "var", "where", "while", "Any", "Type",
    ]

    /// `Query` → `query`, `FPGAVersion` → `fpgaVersion`, `RSSI` → `rssi`.
    static func lowerCamel(_ member: String) -> String {
        let chars = Array(member)
        var upper = 0
        while upper < chars.count, chars[upper].isUppercase { upper += 1 }
        // The last capital of a run starts the next word (FPGAVersion), unless the run is all.
        let lowered = upper > 1 && upper < chars.count ? upper - 1 : max(upper, 1)
        return String(chars[..<lowered]).lowercased() + String(chars[lowered...])
    }

    /// `query_id` → `queryID`, `listened_seconds` → `listenedSeconds`.
    static func camel(_ snake: String) -> String {
        let words = snake.split(separator: "_").map(String.init)
        guard let first = words.first else { return snake }
        return first + words.dropFirst().map { ["id", "url", "ts", "fd"].contains($0) ? $0.uppercased() : $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
    }

    /// An identifier, quoted when Swift reserves it.
    static func identifier(_ name: String) -> String { keywords.contains(name) ? "`\(name)`" : name }

    static func literal(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }

    /// A doc comment, wrapped at about 110 columns.
    static func doc(_ text: String?, indent: String) -> String {
        guard let text, !text.isEmpty else { return "" }
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ") {
            if !line.isEmpty && line.count + word.count > 100 {
                lines.append(line)
                line = ""
            }
            line += (line.isEmpty ? "" : " ") + word
        }
        lines.append(line)
        return lines.map { "\(indent)/// \($0)\n" }.joined()
    }

    private static let basicTypes: [Character: (swift: String, decode: String, encode: String)] = [
        "y": ("UInt8", "byte", "byte"), "b": ("Bool", "bool", "bool"), "n": ("Int16", "int16", "int16"),
        "q": ("UInt16", "uint16", "uint16"), "i": ("Int32", "int32", "int32"), "u": ("UInt32", "uint32", "uint32"),
        "x": ("Int64", "int64", "int64"), "t": ("UInt64", "uint64", "uint64"), "d": ("Double", "double", "double"),
        "s": ("String", "string", "string"), "o": ("String", "objectPath", "objectPath"),
        "g": ("String", "signature", "signature"), "h": ("Int32", "unixFD", "unixFD"),
    ]

    /// The Swift type a value of `type` is read into.
    static func swiftType(_ type: ValueType) -> String {
        guard let single = type.single else { return "DBusValue" }
        return swiftType(single, structName: type.structName)
    }

    static func swiftType(_ type: BusType, structName: String?) -> String {
        switch type {
        case .basic(let c): return basicTypes[c]!.swift
        case .variant: return "DBusValue"
        case .array(.basic("y")): return "[UInt8]"
        case .array(let element) where element.isTyped: return "[" + swiftType(element, structName: structName) + "]"
        case .dict where type == BusType.stringVariantDict: return structName ?? "[String: DBusValue]"
        default: return "DBusValue"
        }
    }

    /// An expression reading `value` (a DBusValue expression) as `type`; `at` names it in errors.
    static func decode(_ type: ValueType, _ value: String, at: String, depth: Int = 0) -> String {
        guard let single = type.single else {
            let signatures = type.alternatives.map { literal($0.signature) }.joined(separator: ", ")
            return "try ContractDecoding.oneOf(\(value), [\(signatures)], at: \(at))"
        }
        return decode(single, structName: type.structName, value, at: at, depth: depth)
    }

    static func decode(_ type: BusType, structName: String?, _ value: String, at: String, depth: Int) -> String {
        switch type {
        case .basic(let c): return "try ContractDecoding.\(basicTypes[c]!.decode)(\(value), at: \(at))"
        case .variant: return value
        case .array(.basic("y")): return "try ContractDecoding.bytes(\(value), at: \(at))"
        case .array(let element) where element.isTyped:
            let item = "e\(depth)"
            let inner = decode(element, structName: structName, item, at: at, depth: depth + 1)
            return "try ContractDecoding.array(\(value), \(literal(element.signature)), at: \(at)) { (\(item): DBusValue) throws(ContractError) -> \(swiftType(element, structName: structName)) in \(inner) }"
        case .dict where type == BusType.stringVariantDict:
            if let structName { return "try \(structName)(\(value), at: \(at))" }
            return "try ContractDecoding.vardict(\(value), at: \(at))"
        default:
            return "try ContractDecoding.raw(\(value), \(literal(type.signature)), at: \(at))"
        }
    }

    /// An expression writing `value` (of the Swift type for `type`) as a DBusValue.
    static func encode(_ type: ValueType, _ value: String, depth: Int = 0) -> String {
        guard let single = type.single else { return value }
        return encode(single, structName: type.structName, value, depth: depth)
    }

    static func encode(_ type: BusType, structName: String?, _ value: String, depth: Int) -> String {
        switch type {
        case .basic(let c): return ".\(basicTypes[c]!.encode)(\(value))"
        case .variant: return ".variant(\(value))"
        case .array(.basic("y")): return ".byteArray(\(value))"
        case .array(let element) where element.isTyped:
            let item = "e\(depth)"
            let inner = encode(element, structName: structName, item, depth: depth + 1)
            return ".array(element: \(literal(element.signature)), \(value).map { (\(item): \(swiftType(element, structName: structName))) -> DBusValue in \(inner) })"
        case .dict where type == BusType.stringVariantDict:
            return structName == nil ? ".vardict(\(value))" : "\(value).busValue"
        default:
            return value
        }
    }
}
