// SPDX-License-Identifier: GPL-2.0-or-later

/// Cuts a byte stream into frames, checking each header before its payload is buffered (§5.2).
/// Feed it bytes as they arrive, in slices of any size, then take frames with `next()` until nil.
/// After an error it stays failed: the connection is over.
public struct FrameDecoder: Sendable {
    public static let defaultMaximumMessageSize = 16 << 20

    /// The longest message (all its fragments together) accepted, in bytes.
    public let maximumMessageSize: Int
    /// Whether frames must be masked: true for a server reading a client, false (the default) for
    /// a client reading a server, which must never mask (§5.1).
    public let expectsMaskedFrames: Bool

    private var buffer: [UInt8] = []
    /// Where the next frame starts in `buffer`; consumed bytes are dropped in batches.
    private var start = 0
    /// Payload bytes of the data message being received, over its fragments so far.
    private var messageBytes = 0
    private var failure: WebSocketError?

    public init(maximumMessageSize: Int = defaultMaximumMessageSize, expectsMaskedFrames: Bool = false) {
        self.maximumMessageSize = maximumMessageSize
        self.expectsMaskedFrames = expectsMaskedFrames
    }

    public mutating func feed(_ bytes: some Collection<UInt8>) {
        buffer.append(contentsOf: bytes)
    }

    /// The next whole frame, nil until enough bytes have been fed.
    public mutating func next() throws(WebSocketError) -> WebSocketFrame? {
        if let failure { throw failure }
        do {
            return try decode()
        } catch {
            failure = error
            throw error
        }
    }

    private mutating func decode() throws(WebSocketError) -> WebSocketFrame? {
        let available = buffer.count - start
        guard available >= 2 else { return nil }
        let first = buffer[start]
        let second = buffer[start + 1]
        guard first & 0x70 == 0 else { throw .protocolViolation("reserved bits set (no extension was negotiated)") }
        guard let opcode = WebSocketFrame.Opcode(rawValue: first & 0x0F) else {
            throw .protocolViolation("unknown opcode \(first & 0x0F)")
        }
        let fin = first & 0x80 != 0
        let masked = second & 0x80 != 0
        if masked != expectsMaskedFrames {
            throw .protocolViolation(masked ? "a server frame is masked" : "a client frame is not masked")
        }
        var headerLength = 2
        var length = UInt64(second & 0x7F)
        if length >= 126 {
            let extra = length == 126 ? 2 : 8
            guard available >= 2 + extra else { return nil }
            length = 0
            for i in 0..<extra { length = length << 8 | UInt64(buffer[start + 2 + i]) }
            headerLength += extra
            if extra == 8 && length >> 63 != 0 { throw .protocolViolation("64-bit length with its high bit set") }
        }
        if opcode.isControl {
            guard fin else { throw .protocolViolation("fragmented control frame") }
            guard length <= 125 else { throw .protocolViolation("control frame longer than 125 bytes") }
        } else {
            // Checked on the header, so an oversized frame fails before any of it is buffered.
            let sofar = opcode == .continuation ? messageBytes : 0
            guard length <= UInt64(maximumMessageSize - sofar) else { throw .messageTooLarge }
        }
        if masked { headerLength += 4 }
        let payloadLength = Int(length)
        guard available >= headerLength + payloadLength else { return nil }

        let payloadStart = start + headerLength
        var payload = Array(buffer[payloadStart..<payloadStart + payloadLength])
        if masked {
            let k = start + headerLength - 4
            MaskingKey(buffer[k], buffer[k + 1], buffer[k + 2], buffer[k + 3]).apply(to: &payload, from: 0)
        }
        if !opcode.isControl {
            messageBytes = (opcode == .continuation ? messageBytes : 0) + payloadLength
        }
        consume(headerLength + payloadLength)
        return WebSocketFrame(fin: fin, opcode: opcode, payload: payload)
    }

    private mutating func consume(_ count: Int) {
        start += count
        if start == buffer.count {
            buffer.removeAll(keepingCapacity: buffer.capacity <= 1 << 16)
            start = 0
        } else if start >= 1 << 16 && start * 2 >= buffer.count {
            // Drop what was read once it outweighs what is left: amortised, no copy per frame.
            buffer.removeFirst(start)
            start = 0
        }
    }
}
