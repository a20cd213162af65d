// SPDX-License-Identifier: GPL-2.0-or-later
import AnswerModel

/// Turns a SUSI chat.json body into answer parts: the first answer's actions, performed in
/// order (SUSI's answers are alternatives; the actions of the chosen one all belong together).
enum SusiAnswerDecoder {
    enum DecodeError: Error, Equatable {
        /// Not JSON, or not shaped like a SUSI response.
        case malformed
        /// No answer, or an answer without actions.
        case noAnswer
        /// Actions, none of which glassd can show (their types).
        case nothingShowable([String])
    }

    static func decode(_ body: [UInt8]) throws(DecodeError) -> SusiReply {
        let json: OrderedJSON
        do {
            json = try OrderedJSON.parse(body)
        } catch {
            throw .malformed
        }
        guard json.members != nil, let answers = json["answers"]?.array else { throw .malformed }
        guard let first = answers.first else { throw .noAnswer }
        guard let actions = first["actions"]?.array, !actions.isEmpty else { throw .noAnswer }
        let data = first["data"]?.array ?? []
        var parts: [AnswerPart] = []
        var skipped: [String] = []
        // A list or place is titled by the text said just before it ("Here are the headlines:").
        var lastExpression: String?
        for action in actions {
            let type = action["type"]?.string ?? "(no type)"
            let part = self.part(of: action, type: type, data: data, title: lastExpression, query: json["query"]?.string)
            if let part { parts.append(part) } else { skipped.append(type) }
            if type == "answer", case .text(let text)? = part { lastExpression = text }
        }
        guard !parts.isEmpty else { throw .nothingShowable(skipped) }
        return SusiReply(answer: TypedAnswer(parts), skipped: skipped)
    }

    private static func part(
        of action: OrderedJSON, type: String, data: [OrderedJSON], title: String?, query: String?
    ) -> AnswerPart? {
        switch type {
        case "answer":
            return nonEmpty(action["expression"]?.scalarText).map { .text($0) }
        case "anchor":
            guard let url = nonEmpty(action["link"]?.string) else { return nil }
            return .link(text: action["text"]?.scalarText ?? "", url: url)
        case "rss":
            let items = rows(data, count: action["count"]).compactMap { rssItem($0, action) }
            return items.isEmpty ? nil : .list(title: title ?? "Results", items: items)
        case "table":
            return table(action, data)
        case "map":
            guard let latitude = action["latitude"]?.double, let longitude = action["longitude"]?.double,
                (-90...90).contains(latitude), (-180...180).contains(longitude)
            else { return nil }
            return .place(name: title ?? "Location", latitude: latitude, longitude: longitude)
        case "websearch":
            // SUSI leaves the search to the client; its query defaults to what was asked.
            guard let query = nonEmpty(action["query"]?.scalarText) ?? nonEmpty(query) else { return nil }
            return .link(text: "Search: \(query)", url: "https://duckduckgo.com/?q=\(query.urlQueryEncoded)")
        default:
            return (nonEmpty(action["expression"]?.scalarText) ?? nonEmpty(action["text"]?.scalarText)).map { .text($0) }
        }
    }

    /// The first `count` rows; -1 (or any negative, or none given) means all of them.
    private static func rows(_ data: [OrderedJSON], count: OrderedJSON?) -> ArraySlice<OrderedJSON> {
        guard let count = count?.double, count >= 0 else { return data[...] }
        return data.prefix(Int(min(count, Double(data.count))))
    }

    /// The row's title, with " — description" when it has one. The action names the keys.
    private static func rssItem(_ row: OrderedJSON, _ action: OrderedJSON) -> String? {
        let titleKey = action["title"]?.string ?? "title"
        let descriptionKey = action["description"]?.string ?? "description"
        let title = nonEmpty(row[titleKey]?.scalarText)
        let description = nonEmpty(row[descriptionKey]?.scalarText)
        switch (title, description) {
        case (let title?, let description?): return "\(title) — \(description)"
        case (let title?, nil): return title
        case (nil, let description): return description
        }
    }

    /// Columns in the order of the action's `columns` object (data key → header); without one,
    /// the first row's keys name themselves.
    private static func table(_ action: OrderedJSON, _ data: [OrderedJSON]) -> AnswerPart? {
        let columns: [(key: String, header: String)]
        if let given = action["columns"]?.members, !given.isEmpty {
            columns = given.map { ($0.key, $0.value.scalarText ?? $0.key) }
        } else {
            columns = (data.first?.members ?? []).map { ($0.key, $0.key) }
        }
        let cells = rows(data, count: action["count"]).map { row in
            columns.map { row[$0.key]?.scalarText ?? "" }
        }
        guard !columns.isEmpty, !cells.isEmpty else { return nil }
        return .table(columns: columns.map(\.header), rows: cells)
    }

    private static func nonEmpty(_ text: String?) -> String? {
        guard let text = text?.trimmingWhitespace, !text.isEmpty else { return nil }
        return text
    }
}
