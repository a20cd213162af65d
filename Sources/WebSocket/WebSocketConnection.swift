// SPDX-License-Identifier: GPL-2.0-or-later

/// A client connection to a WebSocket server (RFC 6455), `ws://` or `wss://` (TLS, the server's
/// certificate checked). The event loop serves the socket (see `SocketThread`); this object only
/// hands it work, so any task may use it.
///
/// Keep the connection while reading `messages`: dropping it closes the socket.
public final class WebSocketConnection: Sendable {
    private let socket: SocketThread
    private let stream: AsyncThrowingStream<WebSocketMessage, any Error>

    /// At most this many messages wait for the reader: see `InboundBacklog`.
    public static let defaultMaximumQueuedMessages = InboundBacklog.defaultMaximumMessages
    /// At most this many bytes of messages wait for the reader.
    public static let defaultMaximumQueuedBytes = InboundBacklog.defaultMaximumBytes

    private init(socket: SocketThread, stream: AsyncThrowingStream<WebSocketMessage, any Error>) {
        self.socket = socket
        self.stream = stream
    }

    deinit {
        socket.abandon()
    }

    /// Connects to `url` (`ws[s]://host[:port][/path][?query]`) and completes the opening
    /// handshake within `timeout`, sending `headers` with the upgrade request. For `wss`, the
    /// server's certificate must chain to the system's CAs, or to those in `caFile` (PEM) when
    /// given, and name the host. Messages longer than `maximumMessageSize` bytes end the
    /// connection with `.messageTooLarge`; a server that gets more than `maximumQueuedMessages`
    /// messages (or `maximumQueuedBytes` bytes) ahead of the reader, with `.backlogFull`.
    public static func connect(
        to url: String, timeout: Duration, headers: [(name: String, value: String)] = [],
        maximumMessageSize: Int = FrameDecoder.defaultMaximumMessageSize, caFile: String? = nil,
        maximumQueuedMessages: Int = defaultMaximumQueuedMessages, maximumQueuedBytes: Int = defaultMaximumQueuedBytes
    ) async throws(WebSocketError) -> WebSocketConnection {
        let handshake = try ClientHandshake(url: WebSocketURL(url), headers: headers)
        let deadline = ContinuousClock.now + timeout
        let socket = try SocketThread()
        let backlog = InboundBacklog(maximumMessages: maximumQueuedMessages, maximumBytes: maximumQueuedBytes)
        // Bounded: a reader that falls this far behind ends the connection (`.backlogFull`), so a
        // server cannot fill memory faster than it is read. Nothing is dropped silently.
        let (stream, continuation) = AsyncThrowingStream.makeStream(
            of: WebSocketMessage.self, throwing: (any Error).self, bufferingPolicy: .bufferingOldest(backlog.maximumMessages))
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { connected in
                socket.start(
                    handshake: handshake, caFile: caFile, deadline: deadline, maximumMessageSize: maximumMessageSize,
                    backlog: backlog, connected: connected, messages: continuation)
            }
        } onCancel: {
            socket.abandon()
        }
        try result.get()
        return WebSocketConnection(socket: socket, stream: stream)
    }

    /// The messages from the server, for one reader. The stream finishes after a close handshake
    /// (either side's) and throws a `WebSocketError` when the connection breaks or the server
    /// breaks the protocol.
    public var messages: AsyncThrowingStream<WebSocketMessage, any Error> { stream }

    /// The server's close frame, once one came: its code (nil if it gave none) and reason.
    public var closeFrame: (code: UInt16?, reason: String)? {
        socket.peerClose.map { ($0.code, $0.reason) }
    }

    /// Sends a text message; returns once it is handed to the kernel. Sends go out in the order
    /// they were made. Throws `.closed` once the connection is closing or closed.
    public func send(text: String) async throws(WebSocketError) {
        try await send(WebSocketFrame(opcode: .text, payload: Array(text.utf8)))
    }

    /// Sends a binary message, as `send(text:)`.
    public func send(binary: [UInt8]) async throws(WebSocketError) {
        try await send(WebSocketFrame(opcode: .binary, payload: binary))
    }

    /// Sends a close frame, waits up to a second for the server's, then closes the socket.
    /// Calling it again, or after the connection ended, just waits for (or returns after) the end.
    public func close(code: UInt16 = 1000, reason: String = "") async {
        await socket.close(code: code, reason: reason)
    }

    private func send(_ frame: WebSocketFrame) async throws(WebSocketError) {
        // Each frame gets a fresh random key (§5.3); encoding here keeps the event loop free.
        let bytes = frame.encoded(maskingKey: .random())
        let id = socket.nextSendID()
        // Waiting for the write is the backpressure: a stalled server holds up its senders, so
        // queued bytes never outgrow what the waiting tasks hold.
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { done in socket.submit(.send(id: id, bytes: bytes, done: done)) }
        } onCancel: {
            socket.submit(.cancelSend(id: id))
        }
        try result.get()
    }
}
