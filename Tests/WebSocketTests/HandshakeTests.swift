// SPDX-License-Identifier: GPL-2.0-or-later
import Testing
import WebSocket

@Suite(.timeLimit(.minutes(5))) struct HandshakeTests {
    /// §1.3's example key and the accept it must produce.
    static let rfcKey = "dGhlIHNhbXBsZSBub25jZQ=="
    static let rfcAccept = "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="

    static func handshake() throws -> ClientHandshake {
        try ClientHandshake(url: WebSocketURL("ws://agent.local:8765/ws?id=1"), key: rfcKey, headers: [("Authorization", "Bearer x")])
    }

    static func response(_ lines: [String], then body: [UInt8] = []) -> [UInt8] {
        Array((lines.joined(separator: "\r\n") + "\r\n\r\n").utf8) + body
    }

    @Test func computesTheRFCAccept() {
        #expect(ClientHandshake.acceptValue(forKey: Self.rfcKey) == Self.rfcAccept)
    }

    @Test func makesRandomSixteenByteKeys() {
        let key = ClientHandshake.makeKey()
        #expect(key.count == 24 && key.hasSuffix("=="))  // 16 bytes in base64
        #expect(key != ClientHandshake.makeKey())
    }

    @Test func buildsTheUpgradeRequest() throws {
        let request = String(decoding: try Self.handshake().request, as: UTF8.self)
        #expect(
            request
                == "GET /ws?id=1 HTTP/1.1\r\nHost: agent.local:8765\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nAuthorization: Bearer x\r\n\r\n")
        #expect(throws: WebSocketError.self, "a header that would inject another") {
            try ClientHandshake(url: WebSocketURL("ws://h"), headers: [("X", "a\r\nEvil: 1")])
        }
    }

    @Test func acceptsA101AndKeepsTheBytesAfterIt() throws {
        let handshake = try Self.handshake()
        let answer = Self.response(
            [
                "HTTP/1.1 101 Switching Protocols", "upgrade: WebSocket", "CONNECTION: keep-alive, Upgrade",
                "Sec-WebSocket-Accept: \(Self.rfcAccept)",
            ], then: [0x81, 0x00])
        // Not complete until the blank line has arrived.
        for cut in 0..<(answer.count - 2) {
            #expect(try handshake.parseResponse(Array(answer[..<cut])) == nil, "cut at \(cut)")
        }
        #expect(try handshake.parseResponse(Array(answer.dropLast(2))) == [])
        #expect(try handshake.parseResponse(answer) == [0x81, 0x00])
    }

    @Test func refusesBadAnswers() throws {
        let handshake = try Self.handshake()
        let good = ["HTTP/1.1 101 Switching Protocols", "Upgrade: websocket", "Connection: Upgrade", "Sec-WebSocket-Accept: \(Self.rfcAccept)"]
        #expect(throws: WebSocketError.handshakeFailed("server answered HTTP 404 Not Found, not 101")) {
            try handshake.parseResponse(Self.response(["HTTP/1.1 404 Not Found", "Content-Length: 0"]))
        }
        #expect(throws: WebSocketError.handshakeFailed("wrong Sec-WebSocket-Accept 'AAAAAAAAAAAAAAAAAAAAAAAAAAA='")) {
            try handshake.parseResponse(Self.response(good.dropLast() + ["Sec-WebSocket-Accept: AAAAAAAAAAAAAAAAAAAAAAAAAAA="]))
        }
        for missing in 1..<good.count {
            var lines = good
            lines.remove(at: missing)
            #expect(throws: WebSocketError.self, "without \(good[missing])") { try handshake.parseResponse(Self.response(lines)) }
        }
        #expect(throws: WebSocketError.self, "an extension we did not offer") {
            try handshake.parseResponse(Self.response(good + ["Sec-WebSocket-Extensions: permessage-deflate"]))
        }
        #expect(throws: WebSocketError.self, "not HTTP") { try handshake.parseResponse(Self.response(["SSH-2.0-OpenSSH"])) }
        #expect(throws: WebSocketError.self, "a head that never ends") {
            try handshake.parseResponse([UInt8](repeating: 0x41, count: 20000))
        }
    }
}
