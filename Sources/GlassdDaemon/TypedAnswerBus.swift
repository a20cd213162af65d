// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import GlassdCore

/// A typed answer as D-Bus carries it (AnswerTyped, AnswerOf): an a{sv} with its main part's
/// fields (the first part that is not text, else the first), `text_form`, `answered_by` (empty:
/// the model) and `parts`, every part as an a{sv} with its `kind`.
enum TypedAnswerBus {
    static func dictionary(_ answer: TypedAnswer, answeredBy: String?) -> DBusValue {
        let main = answer.parts.first { $0.kind != "text" } ?? answer.parts.first
        var entries = main.map(fields) ?? []
        entries.append(entry("text_form", string(answer.textForm)))
        entries.append(entry("answered_by", string(answeredBy ?? "")))
        entries.append(entry("parts", .array(element: "a{sv}", answer.parts.map { .dict(key: "s", value: "v", fields($0)) })))
        return .dict(key: "s", value: "v", entries)
    }

    private static func fields(_ part: AnswerPart) -> [DBusValue.DictEntry] {
        var entries = [entry("kind", string(part.kind))]
        switch part {
        case .text(let text):
            entries.append(entry("text", string(text)))
        case .list(let title, let items):
            entries.append(entry("title", string(title)))
            entries.append(entry("items", strings(items)))
        case .table(let columns, let rows):
            entries.append(entry("columns", strings(columns)))
            entries.append(entry("rows", .array(element: "as", rows.map(strings))))
        case .link(let text, let url):
            entries.append(entry("text", string(text)))
            entries.append(entry("url", string(url)))
        case .place(let name, let latitude, let longitude):
            entries.append(entry("name", string(name)))
            entries.append(entry("latitude", .double(latitude)))
            entries.append(entry("longitude", .double(longitude)))
        case .number(let value, let unit):
            entries.append(entry("value", .double(value)))
            entries.append(entry("unit", string(unit)))
        }
        return entries
    }

    private static func entry(_ key: String, _ value: DBusValue) -> DBusValue.DictEntry {
        DBusValue.DictEntry(.string(key), .variant(value))
    }

    private static func strings(_ values: [String]) -> DBusValue {
        .array(element: "s", values.map { string($0) })
    }

    private static func string(_ text: String) -> DBusValue { .string(text.busSafe) }
}
