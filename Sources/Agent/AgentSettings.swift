// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation

/// `[agent]` in glassd.conf: the TEN agent server and the graph glassd starts there.
public struct AgentSettings: Sendable, Equatable {
    /// The server's HTTP API (http://127.0.0.1:8080).
    public var baseURL: String
    public var graph: String
    /// Passed through as the start request's `properties` ({extension: {property: value}}).
    public var properties: AgentJSON?
    /// The graph's `websocket_server` endpoint.
    public var websocketURL: String
    /// How often the session is pinged; well under the server's 60 s reaper.
    public var ping: Duration
    /// The worker's timeout asked of the server, and how long the glasses may be away before the
    /// session is stopped (seconds).
    public var timeoutSeconds: Int
    /// Play the agent's speech on the host's default audio output.
    public var speak: Bool
    /// How long the graph's websocket is tried after the start (its worker takes a moment to listen).
    public var connectWindow: Duration

    public init(
        baseURL: String, graph: String = "voice_assistant", properties: AgentJSON? = nil, websocketURL: String? = nil,
        ping: Duration = .seconds(3), timeoutSeconds: Int = 60, speak: Bool = false, connectWindow: Duration = .seconds(15)
    ) {
        self.baseURL = baseURL
        self.graph = graph
        self.properties = properties
        self.websocketURL = websocketURL ?? Self.defaultWebSocketURL(baseURL: baseURL)
        self.ping = ping
        self.timeoutSeconds = timeoutSeconds
        self.speak = speak
        self.connectWindow = connectWindow
    }

    /// The websocket_server extension's default: port 8765 on the server's host, in TLS (`wss`)
    /// when the server's API is (https), since the wearer's voice goes over it.
    public static func defaultWebSocketURL(baseURL: String) -> String {
        let components = URLComponents(string: baseURL)
        var host = components?.host ?? "127.0.0.1"
        // Foundation keeps an IPv6 literal's brackets in `host` on some platforms, not on others.
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        let scheme = components?.scheme?.lowercased() == "https" ? "wss" : "ws"
        return "\(scheme)://\(host.contains(":") ? "[\(host)]" : host):8765"
    }
}
