// SPDX-License-Identifier: GPL-2.0-or-later
import Testing
import WebSocket

/// The fixtures are RFC 6455 §5.7's examples, byte for byte.
@Suite(.timeLimit(.minutes(5))) struct FrameCodecTests {
    static let rfcKey = MaskingKey(0x37, 0xfa, 0x21, 0x3d)
    static let hello: [UInt8] = Array("Hello".utf8)
    /// §5.7: a single-frame unmasked text message.
    static let unmaskedHello: [UInt8] = [0x81, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f]
    /// §5.7: a single-frame masked text message.
    static let maskedHello: [UInt8] = [0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58]
    /// §5.7: a fragmented unmasked text message, "Hel" then "lo".
    static let fragmentedHello: [UInt8] = [0x01, 0x03, 0x48, 0x65, 0x6c, 0x80, 0x02, 0x6c, 0x6f]
    /// §5.7: an unmasked ping and a masked pong, both carrying "Hello".
    static let unmaskedPing: [UInt8] = [0x89, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f]
    static let maskedPong: [UInt8] = [0x8a, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58]

    static func decodeAll(_ bytes: [UInt8], masked: Bool = false, max: Int = FrameDecoder.defaultMaximumMessageSize) throws -> [WebSocketFrame] {
        var decoder = FrameDecoder(maximumMessageSize: max, expectsMaskedFrames: masked)
        decoder.feed(bytes)
        var frames: [WebSocketFrame] = []
        while let frame = try decoder.next() { frames.append(frame) }
        return frames
    }

    @Test func encodesTheRFCExamples() {
        #expect(WebSocketFrame(opcode: .text, payload: Self.hello).encoded(maskingKey: nil) == Self.unmaskedHello)
        #expect(WebSocketFrame(opcode: .text, payload: Self.hello).encoded(maskingKey: Self.rfcKey) == Self.maskedHello)
        #expect(WebSocketFrame(opcode: .pong, payload: Self.hello).encoded(maskingKey: Self.rfcKey) == Self.maskedPong)
        let fragments =
            WebSocketFrame(fin: false, opcode: .text, payload: Array("Hel".utf8)).encoded(maskingKey: nil)
            + WebSocketFrame(opcode: .continuation, payload: Array("lo".utf8)).encoded(maskingKey: nil)
        #expect(fragments == Self.fragmentedHello)
    }

    @Test func encodesExtendedLengths() {
        // §5.7: 256 bytes take the 16-bit length (126), 64 KiB the 64-bit one (127).
        let medium = WebSocketFrame(opcode: .binary, payload: [UInt8](repeating: 7, count: 256)).encoded(maskingKey: nil)
        #expect(Array(medium.prefix(4)) == [0x82, 0x7E, 0x01, 0x00])
        #expect(medium.count == 4 + 256)
        let large = WebSocketFrame(opcode: .binary, payload: [UInt8](repeating: 7, count: 65536)).encoded(maskingKey: nil)
        #expect(Array(large.prefix(10)) == [0x82, 0x7F, 0, 0, 0, 0, 0, 0x01, 0x00, 0x00])
        #expect(large.count == 10 + 65536)
        // 125 still fits the 7-bit length; 126 does not.
        #expect(WebSocketFrame(opcode: .binary, payload: [UInt8](repeating: 0, count: 125)).encoded(maskingKey: nil)[1] == 125)
        #expect(WebSocketFrame(opcode: .binary, payload: [UInt8](repeating: 0, count: 126)).encoded(maskingKey: nil)[1] == 126)
        // A masked client frame: the mask bit, then the key after the length.
        let masked = WebSocketFrame(opcode: .binary, payload: [UInt8](repeating: 0, count: 300)).encoded(maskingKey: Self.rfcKey)
        #expect(Array(masked.prefix(8)) == [0x82, 0xFE, 0x01, 0x2C, 0x37, 0xfa, 0x21, 0x3d])
        #expect(Array(masked[8..<12]) == [0x37, 0xfa, 0x21, 0x3d])  // zeros XOR the key are the key
    }

    @Test func decodesTheRFCExamples() throws {
        #expect(try Self.decodeAll(Self.unmaskedHello) == [WebSocketFrame(opcode: .text, payload: Self.hello)])
        #expect(try Self.decodeAll(Self.unmaskedPing) == [WebSocketFrame(opcode: .ping, payload: Self.hello)])
        #expect(
            try Self.decodeAll(Self.fragmentedHello) == [
                WebSocketFrame(fin: false, opcode: .text, payload: Array("Hel".utf8)),
                WebSocketFrame(opcode: .continuation, payload: Array("lo".utf8)),
            ])
        // A server's decoder reads the client's masked frames.
        #expect(try Self.decodeAll(Self.maskedHello, masked: true) == [WebSocketFrame(opcode: .text, payload: Self.hello)])
        #expect(try Self.decodeAll(Self.maskedPong, masked: true) == [WebSocketFrame(opcode: .pong, payload: Self.hello)])
    }

    @Test func roundTripsExtendedLengths() throws {
        for count in [0, 125, 126, 65535, 65536, 70000] {
            let frame = WebSocketFrame(opcode: .binary, payload: (0..<count).map { UInt8(truncatingIfNeeded: $0) })
            #expect(try Self.decodeAll(frame.encoded(maskingKey: nil)) == [frame])
            #expect(try Self.decodeAll(frame.encoded(maskingKey: Self.rfcKey), masked: true) == [frame])
        }
    }

    @Test func decodesFedByteByByteAndAtEverySplit() throws {
        let medium = WebSocketFrame(opcode: .binary, payload: (0..<300).map { UInt8($0 & 0xFF) })
        let stream = Self.unmaskedHello + Self.fragmentedHello + Self.unmaskedPing + medium.encoded(maskingKey: nil)
        let expected = try Self.decodeAll(stream)
        #expect(expected.count == 5)

        var decoder = FrameDecoder()
        var frames: [WebSocketFrame] = []
        for byte in stream {
            decoder.feed([byte])
            while let frame = try decoder.next() { frames.append(frame) }
        }
        #expect(frames == expected)

        for split in 0...stream.count {
            var decoder = FrameDecoder()
            var frames: [WebSocketFrame] = []
            for part in [stream[..<split], stream[split...]] {
                decoder.feed(part)
                while let frame = try decoder.next() { frames.append(frame) }
            }
            #expect(frames == expected, "split at \(split)")
        }
    }

    @Test func rejectsViolations() {
        func error(_ bytes: [UInt8], max: Int = FrameDecoder.defaultMaximumMessageSize) -> WebSocketError? {
            do {
                _ = try Self.decodeAll(bytes, max: max)
                return nil
            } catch {
                return error as? WebSocketError
            }
        }
        func isViolation(_ bytes: [UInt8]) -> Bool {
            if case .protocolViolation = error(bytes) { return true }
            return false
        }
        #expect(isViolation(Self.maskedHello), "a server must not mask")
        #expect(isViolation([0xC1, 0x00]), "RSV1 without an extension")
        #expect(isViolation([0xA1, 0x00]), "RSV2")
        #expect(isViolation([0x91, 0x00]), "RSV3")
        #expect(isViolation([0x83, 0x00]), "opcode 3 is reserved")
        #expect(isViolation([0x8B, 0x00]), "opcode 0xB is reserved")
        #expect(isViolation([0x09, 0x00]), "a fragmented ping")
        #expect(isViolation([0x89, 0x7E, 0x00, 0x7E] + [UInt8](repeating: 0, count: 126)), "a 126-byte ping")
        #expect(isViolation([0x82, 0x7F, 0x80, 0, 0, 0, 0, 0, 0, 0]), "64-bit length with the high bit set")
        // Too large: refused on the header, before the payload arrives.
        #expect(error([0x82, 0x7F, 0, 0, 0, 0x01, 0, 0, 0, 0]) == .messageTooLarge)
        #expect(error([0x82, 0x7E, 0x01, 0x00], max: 255) == .messageTooLarge)
        // Over fragments: 200 + 100 bytes is past a 255-byte maximum.
        let fragments =
            WebSocketFrame(fin: false, opcode: .binary, payload: [UInt8](repeating: 1, count: 200)).encoded(maskingKey: nil)
            + [0x80, 0x64]
        #expect(error(fragments, max: 255) == .messageTooLarge)
        // Exactly the maximum is fine.
        #expect(error(WebSocketFrame(opcode: .binary, payload: [UInt8](repeating: 1, count: 255)).encoded(maskingKey: nil), max: 255) == nil)
    }

    @Test func staysFailedAfterAnError() throws {
        var decoder = FrameDecoder()
        decoder.feed([0x83, 0x00] + Self.unmaskedHello)
        #expect(throws: WebSocketError.self) { try decoder.next() }
        #expect(throws: WebSocketError.self) { try decoder.next() }
    }
}
