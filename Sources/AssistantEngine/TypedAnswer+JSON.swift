// SPDX-License-Identifier: GPL-2.0-or-later
import AnswerModel
import Foundation

/// A typed answer as JSON, for storage: `[{"kind": "table", "columns": [...], "rows": [[...]]}, ...]`.
extension AnswerPart: Codable {
    private enum Key: String, CodingKey {
        case kind, text, title, items, columns, rows, url, name, latitude, longitude, value, unit
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Key.self)
        switch try c.decode(String.self, forKey: .kind) {
        case "text": self = .text(try c.decode(String.self, forKey: .text))
        case "list": self = .list(title: try c.decode(String.self, forKey: .title), items: try c.decode([String].self, forKey: .items))
        case "table":
            self = .table(columns: try c.decode([String].self, forKey: .columns), rows: try c.decode([[String]].self, forKey: .rows))
        case "link": self = .link(text: try c.decode(String.self, forKey: .text), url: try c.decode(String.self, forKey: .url))
        case "place":
            self = .place(
                name: try c.decode(String.self, forKey: .name), latitude: try c.decode(Double.self, forKey: .latitude),
                longitude: try c.decode(Double.self, forKey: .longitude))
        case "number": self = .number(value: try c.decode(Double.self, forKey: .value), unit: try c.decode(String.self, forKey: .unit))
        case let other:
            throw DecodingError.dataCorruptedError(forKey: .kind, in: c, debugDescription: "unknown kind \(other)")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Key.self)
        try c.encode(kind, forKey: .kind)
        switch self {
        case .text(let text): try c.encode(text, forKey: .text)
        case .list(let title, let items):
            try c.encode(title, forKey: .title)
            try c.encode(items, forKey: .items)
        case .table(let columns, let rows):
            try c.encode(columns, forKey: .columns)
            try c.encode(rows, forKey: .rows)
        case .link(let text, let url):
            try c.encode(text, forKey: .text)
            try c.encode(url, forKey: .url)
        case .place(let name, let latitude, let longitude):
            try c.encode(name, forKey: .name)
            try c.encode(latitude, forKey: .latitude)
            try c.encode(longitude, forKey: .longitude)
        case .number(let value, let unit):
            try c.encode(value, forKey: .value)
            try c.encode(unit, forKey: .unit)
        }
    }
}

extension TypedAnswer {
    public func json() throws -> String {
        String(decoding: try JSONEncoder().encode(parts), as: UTF8.self)
    }

    public init(json: String) throws {
        self.init(try JSONDecoder().decode([AnswerPart].self, from: Data(json.utf8)))
    }
}
