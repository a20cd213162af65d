// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation
import Testing
import WebSocket

/// The client against a real socket: `TestServer` plays the server on 127.0.0.1.
@Suite(.timeLimit(.minutes(5))) struct ConnectionTests {
    typealias Peer = TestServer.Peer

    static func text(_ string: String, fin: Bool = true, opcode: WebSocketFrame.Opcode = .text) -> WebSocketFrame {
        WebSocketFrame(fin: fin, opcode: opcode, payload: Array(string.utf8))
    }

    @Test func roundTrip() async throws {
        let server = try TestServer()
        let run = server.run { peer -> (request: String, echoed: WebSocketFrame, pongs: [WebSocketFrame], closeReply: WebSocketFrame) in
            // The first frame rides in the same write as the 101: the client must keep those bytes.
            let request = try peer.acceptHandshake(then: Self.text("welcome").encoded(maskingKey: nil))
            let echoed = try peer.readFrame()
            try peer.send(WebSocketFrame(opcode: .text, payload: echoed.payload))
            try peer.send(Self.text("are you there?", opcode: .ping))
            let pong = try peer.readFrame()
            // "Hel" + "lo", with a ping between the fragments.
            try peer.send(Self.text("Hel", fin: false))
            try peer.send(Self.text("mid", opcode: .ping))
            try peer.send(Self.text("lo", opcode: .continuation))
            let secondPong = try peer.readFrame()
            try peer.send(WebSocketFrame(opcode: .close, payload: [0x03, 0xE8] + Array("done".utf8)))
            let closeReply = try peer.readFrame()
            try peer.readEOF()
            return (request, echoed, [pong, secondPong], closeReply)
        }

        let connection = try await WebSocketConnection.connect(to: server.url, timeout: .seconds(10), headers: [("X-Test", "1")])
        var messages = connection.messages.makeAsyncIterator()
        #expect(try await messages.next() == .text("welcome"))
        try await connection.send(text: "echo me")
        #expect(try await messages.next() == .text("echo me"))
        #expect(try await messages.next() == .text("Hello"))
        #expect(try await messages.next() == nil)  // the close handshake ends the stream cleanly

        let result = try await run.finished()
        #expect(result.request.hasPrefix("GET /test?x=1 HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\n"))
        #expect(result.request.contains("\r\nX-Test: 1"))
        #expect(result.echoed == Self.text("echo me"))
        #expect(result.pongs == [Self.text("are you there?", opcode: .pong), Self.text("mid", opcode: .pong)])
        #expect(Peer.closeCode(result.closeReply) == 1000)
        #expect(connection.closeFrame?.code == 1000 && connection.closeFrame?.reason == "done")

        await connection.close()  // already closed: returns at once
        await #expect(throws: WebSocketError.closed(code: 1000, reason: "done")) { try await connection.send(text: "late") }
    }

    @Test func clientClosesAndSendsStayOrdered() async throws {
        let server = try TestServer()
        let run = server.run { peer -> ([WebSocketFrame], WebSocketFrame) in
            try peer.acceptHandshake()
            var frames: [WebSocketFrame] = []
            while true {
                let frame = try peer.readFrame()
                if frame.opcode == .close {
                    try peer.send(WebSocketFrame(opcode: .close, payload: frame.payload))
                    try peer.readEOF()
                    return (frames, frame)
                }
                frames.append(frame)
            }
        }
        let connection = try await WebSocketConnection.connect(to: server.url, timeout: .seconds(10))
        let big = (0..<100_000).map { UInt8(truncatingIfNeeded: $0) }
        for i in 0..<50 { try await connection.send(text: "message \(i)") }
        try await connection.send(binary: big)
        await connection.close(code: 4000, reason: "bye")
        await connection.close()  // idempotent
        var received: [WebSocketMessage] = []
        for try await message in connection.messages { received.append(message) }
        #expect(received.isEmpty)

        let (frames, close) = try await run.finished()
        #expect(frames == (0..<50).map { Self.text("message \($0)") } + [WebSocketFrame(opcode: .binary, payload: big)])
        #expect(close.payload == [0x0F, 0xA0] + Array("bye".utf8))
        await #expect(throws: WebSocketError.closed(code: 4000, reason: "bye")) { try await connection.send(binary: [1]) }
    }

    @Test func droppingTheConnectionClosesIt() async throws {
        let server = try TestServer()
        let run = server.run { peer -> UInt16? in
            try peer.acceptHandshake()
            let close = try peer.readFrame()
            try peer.readEOF()  // no close answer: the client gives up after its wait and hangs up
            return Peer.closeCode(close)
        }
        var connection: WebSocketConnection? = try await WebSocketConnection.connect(to: server.url, timeout: .seconds(10))
        #expect(connection != nil)
        connection = nil
        #expect(try await run.finished() == 1001)
    }

    /// A refusal is reported as one, not waited out: had the connect waited for its timeout, it
    /// would fail `.timedOut` (no clock is read: a loaded machine is slow, not wrong).
    @Test func refusedConnectionFailsPromptly() async throws {
        let server = try TestServer(listening: false)
        await #expect(throws: WebSocketError.connectFailed("127.0.0.1:\(server.port): Connection refused")) {
            try await WebSocketConnection.connect(to: server.url, timeout: .seconds(600))
        }
    }

    @Test func silentServerTimesOut() async throws {
        let server = try TestServer()
        // The kernel completes the TCP handshake from the backlog; nobody ever answers the upgrade.
        await #expect(throws: WebSocketError.timedOut) {
            try await WebSocketConnection.connect(to: server.url, timeout: .milliseconds(300))
        }
    }

    @Test func non101AnswerFails() async throws {
        let server = try TestServer()
        let run = server.run { peer in
            _ = try peer.readRequest()
            try peer.send(Array("HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n".utf8))
        }
        await #expect(throws: WebSocketError.handshakeFailed("server answered HTTP 403 Forbidden, not 101")) {
            try await WebSocketConnection.connect(to: server.url, timeout: .seconds(10))
        }
        try await run.finished()
    }

    @Test func maskedServerFrameIsAViolation() async throws {
        let server = try TestServer()
        let run = server.run { peer -> UInt16? in
            try peer.acceptHandshake()
            try peer.send(FrameCodecTests.maskedHello)
            let close = try peer.readFrame()
            try peer.readEOF()
            return Peer.closeCode(close)
        }
        let connection = try await WebSocketConnection.connect(to: server.url, timeout: .seconds(10))
        await #expect(throws: WebSocketError.protocolViolation("a server frame is masked")) {
            for try await _ in connection.messages {}
        }
        #expect(try await run.finished() == 1002)
        await #expect(throws: WebSocketError.self) { try await connection.send(text: "late") }
    }

    @Test func invalidUTF8ClosesWith1007() async throws {
        let server = try TestServer()
        let run = server.run { peer -> UInt16? in
            try peer.acceptHandshake()
            try peer.send(WebSocketFrame(opcode: .text, payload: [0xC0, 0xAF]))
            let close = try peer.readFrame()
            try peer.readEOF()
            return Peer.closeCode(close)
        }
        let connection = try await WebSocketConnection.connect(to: server.url, timeout: .seconds(10))
        await #expect(throws: WebSocketError.protocolViolation("invalid UTF-8 in a text message")) {
            for try await _ in connection.messages {}
        }
        #expect(try await run.finished() == 1007)
    }

    @Test func serverHangingUpBreaksTheStream() async throws {
        let server = try TestServer()
        let run = server.run { peer in try peer.acceptHandshake(then: Self.text("one").encoded(maskingKey: nil)) }
        let connection = try await WebSocketConnection.connect(to: server.url, timeout: .seconds(10))
        var messages = connection.messages.makeAsyncIterator()
        #expect(try await messages.next() == .text("one"))
        _ = try await run.finished()  // the script returned: the server closed the socket
        await #expect(throws: WebSocketError.closed(code: nil, reason: "the server closed the connection without a close frame")) {
            _ = try await messages.next()
        }
    }

    @Test func cancellingConnectStopsIt() async throws {
        let server = try TestServer()
        let (requested, reached) = AsyncStream.makeStream(of: Void.self)
        let run = server.run { peer in
            _ = try peer.readRequest()
            reached.yield()
            try peer.readEOF()  // never answered: the cancelled client hangs up
        }
        let connecting = Task { try await WebSocketConnection.connect(to: server.url, timeout: .seconds(60)) }
        for await _ in requested { break }
        connecting.cancel()
        await #expect(throws: WebSocketError.cancelled) { try await connecting.value }
        try await run.finished()
    }

    @Test func otherSchemesAreRefusedClearly() async {
        await #expect(throws: WebSocketError.unsupportedScheme("https")) {
            try await WebSocketConnection.connect(to: "https://example.com/ws", timeout: .seconds(1))
        }
    }
}
