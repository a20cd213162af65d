// SPDX-License-Identifier: GPL-2.0-or-later

/// Turns frames into messages and control events (§5.4, §5.5): joins a text or binary frame with
/// its continuations, lets control frames through between them, and checks that text and close
/// reasons are UTF-8.
public struct MessageAssembler: Sendable {
    public enum Event: Sendable, Equatable {
        case message(WebSocketMessage)
        case ping([UInt8])
        case pong([UInt8])
        /// The peer's close frame; `code` nil when it carried none.
        case close(code: UInt16?, reason: String)
    }

    public let maximumMessageSize: Int
    /// The opcode of the fragmented message under way, and its bytes so far.
    private var pendingOpcode: WebSocketFrame.Opcode?
    private var pending: [UInt8] = []

    public init(maximumMessageSize: Int = FrameDecoder.defaultMaximumMessageSize) {
        self.maximumMessageSize = maximumMessageSize
    }

    /// What `frame` completes, if anything: nil for a fragment that leaves its message unfinished.
    public mutating func push(_ frame: WebSocketFrame) throws(WebSocketError) -> Event? {
        switch frame.opcode {
        case .ping: return .ping(frame.payload)
        case .pong: return .pong(frame.payload)
        case .close: return try Self.close(frame.payload)
        case .text, .binary:
            guard pendingOpcode == nil else {
                throw .protocolViolation("a new message began before the fragmented one ended")
            }
            if frame.fin { return .message(try Self.message(frame.opcode, frame.payload)) }
            guard frame.payload.count <= maximumMessageSize else { throw .messageTooLarge }
            pendingOpcode = frame.opcode
            pending = frame.payload
            return nil
        case .continuation:
            guard let opcode = pendingOpcode else { throw .protocolViolation("a continuation frame with no message to continue") }
            guard frame.payload.count <= maximumMessageSize - pending.count else { throw .messageTooLarge }
            pending.append(contentsOf: frame.payload)
            guard frame.fin else { return nil }
            defer {
                pendingOpcode = nil
                pending = []
            }
            return .message(try Self.message(opcode, pending))
        }
    }

    private static func message(_ opcode: WebSocketFrame.Opcode, _ payload: [UInt8]) throws(WebSocketError) -> WebSocketMessage {
        guard opcode == .text else { return .binary(payload) }
        guard let text = String(validating: payload, as: UTF8.self) else { throw WebSocketError.invalidUTF8 }
        return .text(text)
    }

    private static func close(_ payload: [UInt8]) throws(WebSocketError) -> Event {
        if payload.isEmpty { return .close(code: nil, reason: "") }
        guard payload.count >= 2 else { throw .protocolViolation("a close frame with a 1-byte payload") }
        let code = UInt16(payload[0]) << 8 | UInt16(payload[1])
        guard isValidCloseCode(code) else { throw .protocolViolation("close code \(code) is not allowed on the wire") }
        guard let reason = String(validating: payload.dropFirst(2), as: UTF8.self) else { throw WebSocketError.invalidUTF8 }
        return .close(code: code, reason: reason)
    }

    /// The codes a close frame may carry (§7.4): 1004-1006 and 1015 are reserved for local use,
    /// below 1000 and 1016-2999 are unassigned, 3000-4999 belong to libraries and applications.
    static func isValidCloseCode(_ code: UInt16) -> Bool {
        switch code {
        case 1000...1003, 1007...1014: true
        case 3000...4999: true
        default: false
        }
    }
}
