// SPDX-License-Identifier: GPL-2.0-or-later

/// `POST /start`: run `graph` for `channel`. Fields left nil are not sent, so the server's defaults apply.
public struct TENStartRequest: Sendable, Equatable, Encodable {
    public var requestID: String
    public var channel: String
    public var graph: String
    /// The remote stream the graph listens to (Agora's uid; the websocket graphs ignore it).
    public var userUID: UInt32
    /// `{node: {property: value}}`, merged by the server into the graph's own properties.
    public var properties: AgentJSON?
    /// Seconds without a ping before the server stops the worker; the server honours only > 0.
    public var timeoutSeconds: Int?

    public init(
        requestID: String, channel: String, graph: String, userUID: UInt32 = 0, properties: AgentJSON? = nil,
        timeoutSeconds: Int? = nil
    ) {
        self.requestID = requestID
        self.channel = channel
        self.graph = graph
        self.userUID = userUID
        self.properties = properties
        self.timeoutSeconds = timeoutSeconds
    }

    enum CodingKeys: String, CodingKey {
        case requestID = "request_id"
        case channel = "channel_name"
        case graph = "graph_name"
        case userUID = "user_uid"
        case properties
        case timeoutSeconds = "timeout"
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(requestID, forKey: .requestID)
        try c.encode(channel, forKey: .channel)
        try c.encode(graph, forKey: .graph)
        try c.encode(userUID, forKey: .userUID)
        try c.encodeIfPresent(properties, forKey: .properties)
        try c.encodeIfPresent(timeoutSeconds, forKey: .timeoutSeconds)
    }
}

/// One running agent, from `GET /list`.
public struct TENWorker: Sendable, Equatable {
    public var channel: String
    /// When it started, as the server's `createTs` (Unix seconds).
    public var createdAt: Int64

    public init(channel: String, createdAt: Int64) {
        self.channel = channel
        self.createdAt = createdAt
    }
}
