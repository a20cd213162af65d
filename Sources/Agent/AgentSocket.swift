// SPDX-License-Identifier: GPL-2.0-or-later

/// The websocket to an agent graph's `websocket_server` extension, as the session needs it (the
/// daemon's is a WebSocket connection; tests use in-memory ones).
public protocol AgentSocket: Sendable {
    /// Sends one text message, in order with the ones before it.
    func send(text: String) async throws
    /// The server's text messages until it closes the socket (the stream ends) or it breaks (throws). One reader.
    var messages: any AsyncSequence<String, any Error> { get }
    /// Closes it; idempotent.
    func close() async
}

/// Opens the socket at a `ws://` or `wss://` URL, or throws.
public typealias AgentSocketOpener = @Sendable (String) async throws -> any AgentSocket
