// SPDX-License-Identifier: GPL-2.0-or-later
import Agent
import Foundation
import TOMLKit

/// `[agent]` in glassd.conf: a TEN agent server the glasses can talk to (Manager1.StartAgent).
extension Config {
    static func agentSettings(_ table: TOMLTable?, file: String) throws(Config.Error) -> AgentSettings? {
        guard let table else { return nil }
        func fail(_ what: String) -> Config.Error { Config.Error(description: "\(file): [agent] \(what)") }
        let known: Set = [
            "kind", "base_url", "graph", "properties", "websocket_url", "ping_seconds", "timeout_seconds", "speak",
            "allow_cleartext",
        ]
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
            guard let text = socket.string, let url = URL(string: text), ["ws", "wss"].contains(url.scheme?.lowercased() ?? ""),
                url.host != nil
            else { throw fail("websocket_url must be a ws:// or wss:// URL") }
            settings.websocketURL = text
        }
        var cleartextHosts: [String] = []
        if let allow = table["allow_cleartext"] {
            if let one = allow.string {
                cleartextHosts = [one]
            } else if let list = allow.array, list.allSatisfy({ $0.string != nil }) {
                cleartextHosts = list.compactMap(\.string)
            } else {
                throw fail("allow_cleartext must be a host name, or a list of them")
            }
            guard cleartextHosts.allSatisfy({ !$0.isEmpty && !$0.contains("/") && !$0.contains("://") }) else {
                throw fail("allow_cleartext must name hosts (\"tenbox.lan\"), not URLs")
            }
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
        if let why = cleartextRefusal(settings, explicit: table["websocket_url"] != nil, allowed: cleartextHosts) {
            throw fail(why)
        }
        return settings
    }

    /// Why the agent's websocket may not go where it is set to, or nil. The wearer's voice and the
    /// transcripts go over it: in the clear (`ws://`) only to this machine (loopback) or to a host
    /// named in `allow_cleartext`, and never when the API is https (its websocket must be too).
    static func cleartextRefusal(_ settings: AgentSettings, explicit: Bool, allowed: [String]) -> String? {
        guard let url = URLComponents(string: settings.websocketURL), url.scheme?.lowercased() == "ws" else { return nil }
        var host = (url.host ?? "").lowercased()
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if PrivacyPolicy.isLoopback(host) { return nil }
        let which = explicit ? "websocket_url \(settings.websocketURL)" : "the websocket \(settings.websocketURL) (from base_url)"
        if URLComponents(string: settings.baseURL)?.scheme?.lowercased() == "https" {
            return "base_url is https, but \(which) is not encrypted: set websocket_url to a wss:// URL"
        }
        guard allowed.contains(where: { $0.lowercased() == host }) else {
            return "\(which) would carry the wearer's voice unencrypted to another machine: use a wss:// "
                + "websocket_url, or allow it by name with allow_cleartext = \"\(host)\""
        }
        return nil
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
