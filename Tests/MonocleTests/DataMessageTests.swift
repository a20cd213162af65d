// SPDX-License-Identifier: GPL-2.0-or-later
import Glasses
import Monocle
import Testing

@Suite("Data channel codec", .timeLimit(.minutes(5)))
struct DataMessageTests {
    static let all: [DataMessage] = [
        .ready, .audioStart(.monocle), .audioStart(AudioFormat(sampleRate: 16_000, bits: 8)),
        .audioStart(AudioFormat(sampleRate: 16_000, bits: 16)), .audioStart(AudioFormat(sampleRate: 16_000, bits: 8, codec: .muLaw)),
        .audioData([0x00, 0x80, 0xFF, 0x7F]), .audioEnd, .imageStart(AudioFormat(sampleRate: 16_000, bits: 8)), .imageData([0xFF, 0xD8, 0xFF]),
        .imageEnd, .ping("6F9619FF-8B86-D011-B42D-00C04FC964FF"), .pong("hello"), .response("Paris is the capital."),
        .error("No network"), .imageAck, .display("Hello"), .stopRecording, .cancelled, .answerEnd, .battery(87), .ack(999_999), .ack(0),
        .listen(true), .listen(false), .listening([0x00, 0x80, 0x7F]), .wake("Heard \"hey glasses\""), .glance,
    ]

    @Test("every command round-trips")
    func roundTrip() throws {
        for message in Self.all {
            #expect(try DataMessage.decode(message.encoded) == message)
            #expect(Array(message.encoded.prefix(4)) == Array(message.command.utf8))
        }
    }

    @Test("byte fixtures as the Noa scripts send them")
    func fixtures() throws {
        #expect(try DataMessage.decode(Array("rdy:".utf8)) == .ready)
        // Noa's (and older scripts') ast:/ist: say nothing: 8 kHz 8-bit.
        #expect(try DataMessage.decode(Array("ast:".utf8)) == .audioStart(.monocle))
        #expect(try DataMessage.decode(Array("ist:".utf8)) == .imageStart(.monocle))
        #expect(try DataMessage.decode(Array("dat:".utf8) + [0x01, 0xFE]) == .audioData([0x01, 0xFE]))
        #expect(try DataMessage.decode(Array("pon:abc".utf8)) == .pong("abc"))
        #expect(DataMessage.response("hi").encoded == Array("res:hi".utf8))
        #expect(DataMessage.ack(12).encoded == Array("ack:12".utf8))
        #expect(DataMessage.listen(true).encoded == Array("lsn:1".utf8))
        #expect(DataMessage.listen(false).encoded == Array("lsn:0".utf8))
        #expect(try DataMessage.decode(Array("lis:".utf8) + [0x05, 0xFB]) == .listening([0x05, 0xFB]))
        #expect(DataMessage.wake("Hi").encoded == Array("wak:Hi".utf8))
        // Both pads pressed on idle glasses: main.py sends b'gla:' alone.
        #expect(try DataMessage.decode(Array("gla:".utf8)) == .glance)
        #expect(DataMessage.glance.encoded == Array("gla:".utf8))
    }

    @Test("ast: and ist: carry the recording's format as glassd's scripts name it")
    func recordingFormat() throws {
        let pcm16k8 = AudioFormat(sampleRate: 16_000, bits: 8)
        #expect(try DataMessage.decode(Array("ast:16,8".utf8)) == .audioStart(pcm16k8))
        #expect(try DataMessage.decode(Array("ist:16,8".utf8)) == .imageStart(pcm16k8))
        #expect(try DataMessage.decode(Array("ast:8,16".utf8)) == .audioStart(AudioFormat(sampleRate: 8_000, bits: 16)))
        #expect(
            try DataMessage.decode(Array("ast:16,8,mulaw".utf8)) == .audioStart(AudioFormat(sampleRate: 16_000, bits: 8, codec: .muLaw)))
        #expect(DataMessage.audioStart(pcm16k8).encoded == Array("ast:16,8".utf8))
        #expect(DataMessage.imageStart(.monocle).encoded == Array("ist:8,8".utf8))
        for bad in ["16", "16,", ",8", "12,8", "16,24", "16,16,mulaw", "16,8,alaw", "16,8,mulaw,", "sixteen,8", "16,8 "] {
            #expect(throws: DataMessage.DecodeError.badPayload(command: "ast:"), "\(bad)") { try DataMessage.decode(Array("ast:\(bad)".utf8)) }
            #expect(throws: DataMessage.DecodeError.badPayload(command: "ist:"), "\(bad)") { try DataMessage.decode(Array("ist:\(bad)".utf8)) }
        }
        #expect(throws: DataMessage.DecodeError.badPayload(command: "ast:")) { try DataMessage.decode(Array("ast:".utf8) + [0xC3]) }
    }

    @Test("malformed frames are typed errors")
    func malformed() {
        #expect(throws: DataMessage.DecodeError.tooShort(3)) { try DataMessage.decode(Array("rdy".utf8)) }
        #expect(throws: DataMessage.DecodeError.unknownCommand(Array("zzz:".utf8))) { try DataMessage.decode(Array("zzz:".utf8)) }
        #expect(throws: DataMessage.DecodeError.unknownCommand([0xFF, 0x00, 0x41, 0x3A])) { try DataMessage.decode([0xFF, 0x00, 0x41, 0x3A]) }
        #expect(throws: DataMessage.DecodeError.badPayload(command: "res:")) { try DataMessage.decode(Array("res:".utf8) + [0xC3]) }
        #expect(throws: DataMessage.DecodeError.badPayload(command: "bat:")) { try DataMessage.decode(Array("bat:101".utf8)) }
        #expect(throws: DataMessage.DecodeError.badPayload(command: "ack:")) { try DataMessage.decode(Array("ack:-1".utf8)) }
        #expect(throws: DataMessage.DecodeError.badPayload(command: "ack:")) { try DataMessage.decode(Array("ack:99999999999".utf8)) }
        #expect(throws: DataMessage.DecodeError.badPayload(command: "lsn:")) { try DataMessage.decode(Array("lsn:".utf8)) }
        #expect(throws: DataMessage.DecodeError.badPayload(command: "lsn:")) { try DataMessage.decode(Array("lsn:yes".utf8)) }
        #expect(throws: DataMessage.DecodeError.badPayload(command: "gla:")) { try DataMessage.decode(Array("gla:x".utf8)) }
    }
}

@Suite("Display text", .timeLimit(.minutes(5)))
struct DisplayTextTests {
    @Test("non-ASCII is transliterated for the display font")
    func transliterates() {
        #expect(DisplayText.ascii("Café “naïve” — 5 € … straße\tok") == "Cafe \"naive\" - 5 EUR ... strasse ok")
        #expect(DisplayText.ascii("Zoë\r\nØre\u{7}") == "Zoe\nOre")
        #expect(DisplayText.ascii("日本") == "??")
        #expect(DisplayText.ascii("e\u{301}") == "e")
        #expect(DisplayText.ascii("👍🏽").allSatisfy { $0 == "?" })
        #expect(DisplayText.ascii("x\u{1C}y") == "xy")
    }

    @Test("chunks fit the limit, break after spaces when they can, and lose nothing")
    func chunks() {
        let text = "The quick brown fox jumps over the lazy dog again and again"
        let pieces = DisplayText.chunks(text, limit: 16)
        #expect(pieces.joined() == text)
        #expect(pieces.allSatisfy { $0.utf8.count <= 16 })
        #expect(pieces.dropLast().allSatisfy { $0.hasSuffix(" ") })
        #expect(DisplayText.chunks(String(repeating: "x", count: 40), limit: 16).map(\.count) == [16, 16, 8])
        #expect(DisplayText.chunks("", limit: 5).isEmpty)
    }
}
