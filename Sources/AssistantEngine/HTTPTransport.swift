// SPDX-License-Identifier: GPL-2.0-or-later

/// An HTTP request whose response body is read as it arrives.
public struct HTTPRequest: Sendable {
    public var method: String
    public var url: String
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]
    /// The whole exchange must end within this; a stalled stream fails with `.timedOut`.
    public var timeout: Duration
    public var connectTimeout: Duration

    public init(
        method: String = "POST", url: String, headers: [(name: String, value: String)] = [], body: [UInt8] = [],
        timeout: Duration, connectTimeout: Duration = .seconds(10)
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
        self.connectTimeout = connectTimeout
    }
}

/// A response head with a body stream. A reader that stops early calls `cancel` to end the
/// transfer (it also ends when the reading task is cancelled).
public struct HTTPResponse: Sendable {
    public var status: Int
    /// Header names lower-cased.
    public var headers: [String: String]
    public var body: AsyncThrowingStream<[UInt8], any Error>
    public var cancel: @Sendable () -> Void

    public init(
        status: Int, headers: [String: String], body: AsyncThrowingStream<[UInt8], any Error>,
        cancel: @escaping @Sendable () -> Void = {}
    ) {
        self.status = status
        self.headers = headers
        self.body = body
        self.cancel = cancel
    }
}

/// Why an exchange failed below HTTP.
public enum HTTPTransportError: Error, Sendable, Equatable {
    /// DNS, refused, reset, TLS: the server could not be reached or dropped us.
    case connectionFailed(String)
    case timedOut
    case cancelled
    /// The URL cannot be used (malformed, an unknown scheme): nothing was sent.
    case invalidRequest(String)
    /// The server was reached but did not answer in HTTP (a garbage status line, say).
    case invalidResponse(String)
}

/// Sends HTTP requests; libcurl in the daemon, fakes in tests.
public protocol HTTPTransport: Sendable {
    func send(_ request: HTTPRequest) async throws -> HTTPResponse
}
