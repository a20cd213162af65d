// SPDX-License-Identifier: GPL-2.0-or-later

/// Everything that can go wrong with a WebSocket, from parsing its URL to its last frame.
public enum WebSocketError: Error, Sendable, Equatable {
    /// The URL is not `ws[s]://host[:port][/path][?query]`.
    case invalidURL(String)
    /// A scheme other than `ws` and `wss`.
    case unsupportedScheme(String)
    /// The name did not resolve, or no address accepted the connection.
    case connectFailed(String)
    /// `wss`: the server's certificate is not trusted (unknown issuer, expired, another name).
    case certificateRejected(String)
    /// `wss`: the TLS handshake failed for another reason.
    case tlsFailed(String)
    /// Connecting and the opening handshake took longer than allowed.
    case timedOut
    /// The server did not accept the upgrade (wrong status, headers or accept key).
    case handshakeFailed(String)
    /// The peer broke RFC 6455 (a masked frame, bad UTF-8, an unknown opcode…).
    case protocolViolation(String)
    /// A message (or one frame) is longer than the configured maximum.
    case messageTooLarge
    /// The server sent more messages (or bytes) than the reader had taken, past the maximum.
    case backlogFull(messages: Int, bytes: Int)
    /// The connection is closed: by a close handshake (`code` as the peer sent it, nil if it sent
    /// none), by `close()`, or because the socket broke (`code` nil, `reason` says what happened).
    case closed(code: UInt16?, reason: String)
    /// The task waiting to connect or send was cancelled.
    case cancelled

    /// What went wrong, in plain English.
    public var message: String {
        switch self {
        case .invalidURL(let url): "invalid WebSocket URL: \(url)"
        case .unsupportedScheme(let scheme): "unsupported scheme '\(scheme)' (only ws:// and wss:// are supported)"
        case .connectFailed(let why): "could not connect: \(why)"
        case .certificateRejected(let why): "the server's TLS certificate is not trusted: \(why)"
        case .tlsFailed(let why): "TLS failed: \(why)"
        case .timedOut: "timed out connecting to the WebSocket server"
        case .handshakeFailed(let why): "WebSocket handshake failed: \(why)"
        case .protocolViolation(let why): "WebSocket protocol violation: \(why)"
        case .messageTooLarge: "WebSocket message too large"
        case .backlogFull(let messages, let bytes):
            "the WebSocket server sent faster than it was read (\(messages) messages, \(bytes) bytes waiting)"
        case .closed(let code, let reason):
            "WebSocket closed" + (code.map { " (code \($0))" } ?? "") + (reason.isEmpty ? "" : ": \(reason)")
        case .cancelled: "cancelled"
        }
    }

    /// Text that is not UTF-8; its own value because it closes with its own code (1007).
    static let invalidUTF8 = WebSocketError.protocolViolation("invalid UTF-8 in a text message")

    /// The close code to send the peer when this error ends the connection (RFC 6455 §7.4.1).
    var closeCode: UInt16 {
        switch self {
        case .messageTooLarge: 1009
        // Flooding past what the reader takes: the peer broke our policy, not the protocol.
        case .backlogFull: 1008
        case .invalidUTF8: 1007
        case .protocolViolation: 1002
        default: 1011
        }
    }
}

extension WebSocketError: CustomStringConvertible {
    public var description: String { message }
}
