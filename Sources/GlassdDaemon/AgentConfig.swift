// SPDX-License-Identifier: GPL-2.0-or-later
import Agent
import Foundation
import TOMLKit

/// `[agent]` in glassd.conf: a TEN agent server the glasses can talk to (Manager1.StartAgent).
extension Config {
    static func agentSettings(_ table: TOMLTable?, file: String) throws(Config.Error) -> AgentSettings? {
        guard let table else { return nil }
        func fail(_ what: String) -> Config.Error { Config.Error(description: "\(file): [agent] \(what)") }
        let known: Set = ["kind", "base_url", "graph", "properties", "websocket_url", "ping_seconds", "timeout_seconds", "speak"]
        if let unknown = table.keys.sorted().first(where: { !known.contains($0) }) {
            throw fail("has no setting \(unknown)")
        }
        let kind = table["kind"].map { $0.string } ?? "ten"
        guard kind == "ten" else { throw fail("kind must be \"ten\" (the only agent server glassd knows)") }
        guard let baseURL = table["base_url"]?.string,
            let url = URL(string: baseURL), ["http", "https"].contains(url.scheme?.lowercased() ?? ""), url.host != nil
        else { throw fail("base_url must be the agent server's http(s) URL") }
        var settings = AgentSettings(baseURL: baseURL)
        if let graph = table["graph"] {
            guard let name = graph.string, !name.isEmpty else { throw fail("graph must be a graph's name") }
            settings.graph = name
        }
        if let properties = table["properties"] {
            guard let inner = properties.table else { throw fail("properties must be a table") }
            settings.properties = agentJSON(inner)
        }
        if let socket = table["websocket_url"] {
            guard let text = socket.string, let url = URL(string: text), url.scheme?.lowercased() == "ws", url.host != nil
            else { throw fail("websocket_url must be a ws:// URL") }
            settings.websocketURL = text
        }
        if let ping = table["ping_seconds"] {
            guard let seconds = ping.int, (1...30).contains(seconds) else {
                throw fail("ping_seconds must be a whole number in 1...30 (the server gives up after 60 s without one)")
            }
            settings.ping = .seconds(seconds)
        }
        if let timeout = table["timeout_seconds"] {
            guard let seconds = timeout.int, (5...86_400).contains(seconds) else {
                throw fail("timeout_seconds must be a whole number in 5...86400")
            }
            settings.timeoutSeconds = seconds
        }
        if let speak = table["speak"] {
            guard let on = speak.bool else { throw fail("speak must be true or false") }
            settings.speak = on
        }
        return settings
    }

    /// A TOML value as JSON, for the start request's properties (dates and times as their text).
    static func agentJSON(_ value: any TOMLValueConvertible) -> AgentJSON {
        if let table = value.table {
            var object: [String: AgentJSON] = [:]
            for (key, inner) in table { object[key] = agentJSON(inner) }
            return .object(object)
        }
        if let array = value.array { return .array(array.map { agentJSON($0) }) }
        if let bool = value.bool { return .bool(bool) }
        if let int = value.int { return .integer(Int64(int)) }
        if let double = value.double { return .number(double) }
        if let string = value.string { return .string(string) }
        return .string(value.tomlValue.debugDescription)
    }
}
