// SPDX-License-Identifier: GPL-2.0-or-later

/// One frame on the wire (RFC 6455 §5.2), payload unmasked.
public struct WebSocketFrame: Sendable, Equatable {
    public enum Opcode: UInt8, Sendable {
        case continuation = 0x0
        case text = 0x1
        case binary = 0x2
        case close = 0x8
        case ping = 0x9
        case pong = 0xA

        /// Close, ping and pong: at most 125 bytes, never fragmented (§5.5).
        public var isControl: Bool { rawValue & 0x8 != 0 }
    }

    public var fin: Bool
    public var opcode: Opcode
    public var payload: [UInt8]

    public init(fin: Bool = true, opcode: Opcode, payload: [UInt8] = []) {
        self.fin = fin
        self.opcode = opcode
        self.payload = payload
    }

    /// The frame's bytes. A client masks every frame (§5.3) with `maskingKey`; nil leaves the
    /// payload unmasked, as a server sends it.
    public func encoded(maskingKey: MaskingKey?) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(payload.count + 14)
        bytes.append((fin ? 0x80 : 0) | opcode.rawValue)
        let maskBit: UInt8 = maskingKey == nil ? 0 : 0x80
        switch payload.count {
        case ..<126:
            bytes.append(maskBit | UInt8(payload.count))
        case ...0xFFFF:
            bytes.append(maskBit | 126)
            bytes.append(UInt8(payload.count >> 8))
            bytes.append(UInt8(payload.count & 0xFF))
        default:
            bytes.append(maskBit | 127)
            let length = UInt64(payload.count)
            for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: length >> UInt64(shift))) }
        }
        guard let maskingKey else { return bytes + payload }
        bytes.append(contentsOf: maskingKey.bytes)
        let start = bytes.count
        bytes.append(contentsOf: payload)
        maskingKey.apply(to: &bytes, from: start)
        return bytes
    }

    /// A close frame's payload: the code, then the reason in UTF-8, cut to fit 125 bytes.
    static func closePayload(code: UInt16, reason: String) -> [UInt8] {
        var reasonBytes = Array(reason.utf8.prefix(123))
        // Never cut a character in half: the peer must be able to read the reason as UTF-8.
        while String(validating: reasonBytes, as: UTF8.self) == nil { reasonBytes.removeLast() }
        return [UInt8(code >> 8), UInt8(code & 0xFF)] + reasonBytes
    }
}

/// The 4-byte key a client XORs its payload with (§5.3).
public struct MaskingKey: Sendable, Equatable {
    public var bytes: [UInt8]

    public init(_ b0: UInt8, _ b1: UInt8, _ b2: UInt8, _ b3: UInt8) {
        bytes = [b0, b1, b2, b3]
    }

    /// A fresh key from the system's random source, as §5.3 requires for every frame.
    public static func random() -> MaskingKey {
        var generator = SystemRandomNumberGenerator()
        let value = generator.next() as UInt32
        return MaskingKey(UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF))
    }

    /// XORs `buffer[start...]` with the key in place (masking and unmasking are the same).
    func apply(to buffer: inout [UInt8], from start: Int) {
        let key = bytes
        buffer.withUnsafeMutableBufferPointer { buffer in
            for i in start..<buffer.count { buffer[i] ^= key[(i - start) & 3] }
        }
    }
}
