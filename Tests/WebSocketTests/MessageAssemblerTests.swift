// SPDX-License-Identifier: GPL-2.0-or-later
import Testing
import WebSocket

@Suite(.timeLimit(.minutes(5))) struct MessageAssemblerTests {
    @Test func joinsFragmentsAroundControlFrames() throws {
        var assembler = MessageAssembler()
        #expect(try assembler.push(WebSocketFrame(fin: false, opcode: .text, payload: Array("Hel".utf8))) == nil)
        // §5.4: control frames may come between the fragments of a message.
        #expect(try assembler.push(WebSocketFrame(opcode: .ping, payload: [1, 2])) == .ping([1, 2]))
        #expect(try assembler.push(WebSocketFrame(fin: false, opcode: .continuation, payload: [])) == nil)
        #expect(try assembler.push(WebSocketFrame(opcode: .pong, payload: [3])) == .pong([3]))
        #expect(try assembler.push(WebSocketFrame(opcode: .continuation, payload: Array("lo".utf8))) == .message(.text("Hello")))
        #expect(try assembler.push(WebSocketFrame(opcode: .binary, payload: [0xFF, 0x00])) == .message(.binary([0xFF, 0x00])))
    }

    @Test func checksUTF8OnTheWholeMessage() throws {
        var assembler = MessageAssembler()
        // "é" is C3 A9; split across fragments it is still valid.
        #expect(try assembler.push(WebSocketFrame(fin: false, opcode: .text, payload: [0x63, 0xC3])) == nil)
        #expect(try assembler.push(WebSocketFrame(opcode: .continuation, payload: [0xA9])) == .message(.text("cé")))
        #expect(throws: WebSocketError.protocolViolation("invalid UTF-8 in a text message")) {
            try assembler.push(WebSocketFrame(opcode: .text, payload: [0xCE, 0xBA, 0xE1, 0xBD, 0xB9, 0xCF, 0x83, 0xCE, 0xBC, 0xCE, 0xB5, 0xED, 0xA0, 0x80]))
        }
    }

    @Test func rejectsBadSequences() {
        var assembler = MessageAssembler()
        #expect(throws: WebSocketError.self, "a continuation with nothing to continue") {
            try assembler.push(WebSocketFrame(opcode: .continuation, payload: [1]))
        }
        var interrupted = MessageAssembler()
        #expect(throws: WebSocketError.self, "a new message inside a fragmented one") {
            _ = try interrupted.push(WebSocketFrame(fin: false, opcode: .binary, payload: [1]))
            _ = try interrupted.push(WebSocketFrame(opcode: .text, payload: [2]))
        }
        var small = MessageAssembler(maximumMessageSize: 3)
        #expect(throws: WebSocketError.messageTooLarge) {
            _ = try small.push(WebSocketFrame(fin: false, opcode: .binary, payload: [1, 2]))
            _ = try small.push(WebSocketFrame(opcode: .continuation, payload: [3, 4]))
        }
    }

    @Test func readsCloseFrames() throws {
        var assembler = MessageAssembler()
        #expect(try assembler.push(WebSocketFrame(opcode: .close)) == .close(code: nil, reason: ""))
        #expect(try assembler.push(WebSocketFrame(opcode: .close, payload: [0x03, 0xE8] + Array("bye".utf8))) == .close(code: 1000, reason: "bye"))
        #expect(try assembler.push(WebSocketFrame(opcode: .close, payload: [0x0F, 0xA0])) == .close(code: 4000, reason: ""))
        #expect(throws: WebSocketError.self, "a 1-byte close payload") { try assembler.push(WebSocketFrame(opcode: .close, payload: [0x03])) }
        #expect(throws: WebSocketError.self, "1005 is never sent") { try assembler.push(WebSocketFrame(opcode: .close, payload: [0x03, 0xED])) }
        #expect(throws: WebSocketError.protocolViolation("invalid UTF-8 in a text message")) {
            try assembler.push(WebSocketFrame(opcode: .close, payload: [0x03, 0xE8, 0xFF]))
        }
    }
}
