// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import Foundation
import GlassdAPI
import GlassdContract

/// A typed answer (AnswerTyped's a{sv}) as a terminal shows it, and as JSON.
struct TypedAnswerPrinting {
    typealias Fields = GlassdBus.Manager1.TypedAnswerFields
    let kind: String
    let fields: Fields

    /// Every part in order, tables and lists laid out; nil for an answer of text alone (its
    /// text form, as streamed, reads well as it is).
    var terminalText: String? {
        guard kind == "table" || kind == "list", let parts = fields.parts else { return nil }
        return parts.map(Self.layout).joined(separator: "\n")
    }

    /// One part as a terminal shows it.
    static func layout(_ part: Fields) -> String {
        switch part.kind {
        case "table":
            guard let rows = part.rows else { return "" }
            return table(columns: part.columns ?? [], rows: rows)
        case "list":
            let title = part.title ?? ""
            let items = (part.items ?? []).enumerated().map { "\($0.offset + 1). \($0.element)" }
            return ([title].filter { !$0.isEmpty } + items).joined(separator: "\n")
        case "link":
            return "\(part.text ?? "") <\(part.url ?? "")>"
        case "place":
            return String(format: "%@ (%.5f, %.5f)", part.name ?? "", part.latitude ?? 0, part.longitude ?? 0)
        case "number":
            let value = part.value ?? 0
            let shown = value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
            return [shown, part.unit ?? ""].filter { !$0.isEmpty }.joined(separator: " ")
        default:
            return part.text ?? ""
        }
    }

    /// Columns as wide as their widest cell, a rule under the header.
    static func table(columns: [String], rows: [[String]]) -> String {
        let count = max(columns.count, rows.map(\.count).max() ?? 0)
        let padded = ([columns] + rows).map { $0 + Array(repeating: "", count: count - $0.count) }
        let widths = (0..<count).map { column in padded.map { $0[column].count }.max() ?? 0 }
        func line(_ cells: [String]) -> String {
            zip(cells, widths).map { $0 + String(repeating: " ", count: $1 - $0.count) }.joined(separator: "  ")
                .replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression)
        }
        let rule = widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ")
        return ([line(padded[0]), rule] + padded.dropFirst().map(line)).joined(separator: "\n")
    }

    /// The structure as JSON-ready values.
    var json: [String: JSONValue] {
        fields.dictionary.mapValues(JSONValue.init)
    }
}

/// A D-Bus value as JSON (for --json).
enum JSONValue: Encodable {
    case string(String), number(Double), bool(Bool), array([JSONValue]), object([String: JSONValue]), null

    init(_ value: DBusValue) {
        switch value.unwrapped {
        case .string(let s), .objectPath(let s): self = .string(s)
        case .double(let d): self = .number(d)
        case .bool(let b): self = .bool(b)
        case .int32(let i): self = .number(Double(i))
        case .uint32(let i): self = .number(Double(i))
        case .int64(let i): self = .number(Double(i))
        case .uint64(let i): self = .number(Double(i))
        case .array(_, let items):
            self = .array(items.map(JSONValue.init))
        case let other:
            if let keyed = other.stringKeyed { self = .object(keyed.mapValues(JSONValue.init)) } else { self = .null }
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let s): try container.encode(s)
        case .number(let d): try container.encode(d)
        case .bool(let b): try container.encode(b)
        case .array(let a): try container.encode(a)
        case .object(let o): try container.encode(o)
        case .null: try container.encodeNil()
        }
    }
}
