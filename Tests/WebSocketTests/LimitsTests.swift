// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation
import Testing
@testable import WebSocket

/// What a server cannot grow without end: the messages waiting for the reader, the pongs
/// waiting to go out.
// Three minutes: the keeping-up test is 200 round trips through two threads each way, and a loaded
// two-core run once took 170 ms a trip (the limit guards against a hang; it times nothing).
@Suite(.timeLimit(.minutes(3)))
struct LimitsTests {
    @Test("a server more messages ahead of the reader than allowed is closed with 1008; the reader still gets those that waited")
    func backlogByCount() async throws {
        let server = try TestServer()
        let run = server.run { peer -> UInt16? in
            try peer.acceptHandshake()
            for i in 0..<150 { try peer.send(ConnectionTests.text("m\(i)")) }
            let close = try peer.readFrame()
            return TestServer.Peer.closeCode(close)
        }
        let connection = try await WebSocketConnection.connect(to: server.url, timeout: .seconds(10), maximumQueuedMessages: 100)
        // Nobody reads until the server has been told.
        #expect(try await run.finished() == 1008)
        var received: [WebSocketMessage] = []
        let bytes = (0...100).reduce(0) { $0 + "m\($1)".utf8.count }
        await #expect(throws: WebSocketError.backlogFull(messages: 101, bytes: bytes)) {
            for try await message in connection.messages { received.append(message) }
        }
        #expect(received == (0..<100).map { .text("m\($0)") })
    }

    @Test("so is one more bytes ahead than allowed")
    func backlogByBytes() async throws {
        let server = try TestServer()
        let big = [UInt8](repeating: 7, count: 1 << 20)
        let run = server.run { peer -> UInt16? in
            try peer.acceptHandshake()
            // Four: the fourth takes the reader over the bound, and it closes; a fifth could still be
            // on its way then, and its send fail (seen on a loaded host).
            for _ in 0..<4 { try peer.send(WebSocketFrame(opcode: .binary, payload: big)) }
            return TestServer.Peer.closeCode(try peer.readFrame())
        }
        let connection = try await WebSocketConnection.connect(
            to: server.url, timeout: .seconds(10), maximumQueuedBytes: 3 << 20 + 1000)
        #expect(try await run.finished() == 1008)
        var count = 0
        await #expect(throws: WebSocketError.backlogFull(messages: 4, bytes: 4 << 20)) {
            for try await message in connection.messages {
                #expect(message == .binary(big))
                count += 1
            }
        }
        #expect(count == 4)
    }

    @Test("a reader that keeps up is never cut off")
    func keepingUp() async throws {
        let server = try TestServer()
        let run = server.run { peer -> UInt16? in
            try peer.acceptHandshake()
            for i in 0..<200 {
                try peer.send(ConnectionTests.text("m\(i)"))
                // Each answered before the next: the backlog never holds more than one.
                _ = try peer.readFrame()
            }
            try peer.send(WebSocketFrame(opcode: .close, payload: [0x03, 0xE8]))
            return TestServer.Peer.closeCode(try peer.readFrame())
        }
        let connection = try await WebSocketConnection.connect(to: server.url, timeout: .seconds(10), maximumQueuedMessages: 2)
        var count = 0
        for try await message in connection.messages {
            guard case .text(let text) = message else { continue }
            try await connection.send(text: text)
            count += 1
        }
        #expect(count == 200)
        #expect(try await run.finished() == 1000)
    }

    @Test("the byte count follows the reader: only the messages still waiting count")
    func backlogBookkeeping() {
        var backlog = InboundBacklog(maximumMessages: 10, maximumBytes: 100)
        let first = backlog.yielded(size: 60, queued: 1)
        let second = backlog.yielded(size: 60, queued: 2)  // 120 waiting
        let third = backlog.yielded(size: 60, queued: 1)  // the reader took both before this one
        #expect(first && !second && third)
        #expect(backlog.bytes == 60 && backlog.waiting == 1)
        var allFine = true
        for _ in 0..<10_000 { allFine = backlog.yielded(size: 1, queued: 3) && allFine }
        #expect(allFine && backlog.bytes == 3 && backlog.waiting == 3)
    }

    @Test("a ping flood leaves one pong waiting, answering the latest ping, and never cuts into a frame under way")
    func pongsCoalesce() {
        func pong(_ i: Int) -> [UInt8] { WebSocketFrame(opcode: .pong, payload: Array("p\(i)".utf8)).encoded(maskingKey: nil) }
        var queue = OutgoingQueue(triedWritesPin: false)
        queue.append(.init(bytes: [1, 2, 3], kind: .message, id: 1))
        for i in 0..<10_000 { queue.enqueuePong(pong(i)) }
        #expect(queue.count == 2)
        #expect(queue.items.map(\.kind) == [.pong, .message] && queue.items[0].bytes == pong(9_999))

        // The pong goes out; the message's first byte too; then pings come again.
        let pongSent = queue.wrote(queue.items[0].bytes.count)
        let messageSent = queue.wrote(1)
        #expect(pongSent?.kind == .pong && messageSent == nil)
        for i in 0..<10_000 { queue.enqueuePong(pong(i)) }
        #expect(queue.items.map(\.kind) == [.message, .pong] && queue.items[1].bytes == pong(9_999))

        // Over TLS a write once tried pins its frame even with nothing written.
        var tls = OutgoingQueue(triedWritesPin: true)
        tls.append(.init(bytes: [1, 2, 3], kind: .message, id: 1))
        let tried = tls.wrote(0)
        tls.enqueuePong(pong(1))
        #expect(tried == nil && tls.items.map(\.kind) == [.message, .pong])
        let takenBack = tls.takeBack(id: 1)
        #expect(takenBack == nil && tls.count == 2)
    }
}
