// SPDX-License-Identifier: GPL-2.0-or-later
import AssistantEngine
import Foundation

/// The TEN agent server's HTTP API: start, ping and stop an agent on a channel, list what runs,
/// and the graphs it offers. One request per call, no retries: the session runner decides.
public struct TENClient: Sendable {
    /// A reply is cut here: the largest real one (a long list) is a few kB.
    static let maxReplyBytes = 1 << 20

    public let baseURL: String
    public let timeout: Duration
    private let transport: any HTTPTransport

    public init(baseURL: String, transport: any HTTPTransport, timeout: Duration = .seconds(10)) {
        self.baseURL = baseURL
        self.transport = transport
        self.timeout = timeout
    }

    public func start(_ request: TENStartRequest) async throws(AgentError) {
        let body: Data
        do {
            body = try Self.encoder.encode(request)
        } catch {
            throw .malformed("The start request's properties cannot be written as JSON.")
        }
        _ = try await call("POST", "start", body: Array(body))
    }

    /// Keeps the agent alive: the server stops one not pinged for its timeout.
    public func ping(requestID: String, channel: String) async throws(AgentError) {
        _ = try await call("POST", "ping", body: Self.channelBody(requestID: requestID, channel: channel))
    }

    public func stop(requestID: String, channel: String) async throws(AgentError) {
        _ = try await call("POST", "stop", body: Self.channelBody(requestID: requestID, channel: channel))
    }

    /// The agents running now. The server's list may begin with nulls: they are skipped.
    public func list() async throws(AgentError) -> [TENWorker] {
        guard case .array(let items) = try await call("GET", "list") else { return [] }
        return items.compactMap { item in
            guard let channel = item["channelName"]?.stringValue else { return nil }
            return TENWorker(channel: channel, createdAt: item["createTs"]?.integerValue ?? 0)
        }
    }

    /// The names of the graphs the server can start.
    public func graphs() async throws(AgentError) -> [String] {
        guard case .array(let items) = try await call("GET", "graphs") else { return [] }
        return items.compactMap { $0["name"]?.stringValue }
    }

    /// The base URL and the route, one slash between them whatever the configuration wrote.
    func url(_ route: String) -> String {
        var base = Substring(baseURL)
        while base.hasSuffix("/") { base = base.dropLast() }
        return "\(base)/\(route)"
    }

    /// Host and port, for messages: never credentials or a query that the URL may carry.
    var server: String {
        guard let parts = URLComponents(string: baseURL), let host = parts.host, !host.isEmpty else {
            return "(an unusable address)"
        }
        return parts.port.map { "\(host):\($0)" } ?? host
    }

    private func call(_ method: String, _ route: String, body: [UInt8] = []) async throws(AgentError) -> AgentJSON {
        var headers: [(name: String, value: String)] = [("Accept", "application/json")]
        if method == "POST" { headers.append(("Content-Type", "application/json")) }
        let request = HTTPRequest(
            method: method, url: url(route), headers: headers, body: body, timeout: timeout,
            connectTimeout: min(timeout, .seconds(10)))
        let status: Int
        let reply: [UInt8]
        do {
            let response = try await transport.send(request)
            defer { response.cancel() }
            status = response.status
            reply = try await Self.collect(response.body)
        } catch is TooLarge {
            throw .malformed("The agent server at \(server) sent a reply over \(Self.maxReplyBytes / 1024) kB.")
        } catch {
            throw unreachable(error)
        }
        return try TENReply.data(status: status, body: reply, server: server)
    }

    private func unreachable(_ error: any Error) -> AgentError {
        switch error {
        case HTTPTransportError.timedOut:
            return .unreachable("No reply from the agent server at \(server) within \(timeout.components.seconds) s.")
        case HTTPTransportError.cancelled, is CancellationError:
            return .unreachable("The request to the agent server at \(server) was cancelled.")
        case HTTPTransportError.connectionFailed(let why):
            return .unreachable("Could not reach the agent server at \(server): \(why)")
        case HTTPTransportError.invalidResponse(let why):
            return .unreachable("The agent server at \(server) did not answer in HTTP: \(why)")
        case HTTPTransportError.invalidRequest:
            return .unreachable("The agent server address cannot be used (\(server)).")
        default:
            return .unreachable("Could not reach the agent server at \(server): \(error)")
        }
    }

    private struct TooLarge: Error {}

    private static func collect(_ body: AsyncThrowingStream<[UInt8], any Error>) async throws -> [UInt8] {
        var all: [UInt8] = []
        for try await chunk in body {
            guard all.count + chunk.count <= maxReplyBytes else { throw TooLarge() }
            all += chunk
        }
        return all
    }

    private static func channelBody(requestID: String, channel: String) -> [UInt8] {
        let body: AgentJSON = ["request_id": .string(requestID), "channel_name": .string(channel)]
        return (try? encoder.encode(body)).map(Array.init) ?? []
    }

    /// Sorted keys: the same request is the same bytes (tests, logs).
    private static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }
}
