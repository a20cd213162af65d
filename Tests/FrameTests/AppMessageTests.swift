// SPDX-License-Identifier: GPL-2.0-or-later
import Frame
import Glasses
import Testing

@Suite("App message codec", .timeLimit(.minutes(5)))
struct AppMessageTests {
    static let all: [AppMessage] = [
        .display("Paris"), .display(""), .response("is the capital — ¿sí? 日本 😀"), .error("No network"), .answerEnd,
        .alert("Car ahead"), .alert(""), .stopRecording, .capture(PhotoSettings(quality: 4, resolution: 720)),
        .photoSettings(PhotoSettings(quality: 0, resolution: 256)), .ready("3f2a"), .audioStart(AudioFormat(sampleRate: 8000, bits: 16)),
        .audioStart(AudioFormat(sampleRate: 16000, bits: 8)), .audioStart(AudioFormat(sampleRate: 16000, bits: 8, codec: .muLaw)),
        .audioStart(AudioFormat(sampleRate: 16000, bits: 16, codec: .lc3(frameBytes: 40, frameMicros: 10_000))), .audioData([0x00, 0x80, 0xFF, 0x7F]), .audioEnd, .photoStart,
        .photoData([0xFF, 0xD8, 0xFF]), .photoEnd, .sceneStart, .sceneEnd, .cancelled, .battery(0), .battery(100), .tap,
        .listen(true), .listen(false), .wake("Heard \"hey glasses\""), .listening([0x00, 0x80, 0x7F]),
        .charging(true), .charging(false),
        .speakStart(SpeakerFormat(codec: .pcm16, sampleRate: 16_000), volume: 60, listen: false),
        .speakStart(SpeakerFormat(codec: .lc3(frameBytes: 40, frameMicros: 10_000), sampleRate: 16_000), volume: 100, listen: true),
        .speakStart(SpeakerFormat(codec: .lc3(frameBytes: 30, frameMicros: 7_500), sampleRate: 8_000), volume: 0, listen: false),
        .speakStart(SpeakerFormat(codec: .pcm16, sampleRate: 8_000), volume: 60, listen: true),
        .speakStop, .speaking(true, overhearing: nil), .speaking(false, overhearing: nil),
        .speaking(true, overhearing: AudioFormat(sampleRate: 16_000, bits: 16, codec: .lc3(frameBytes: 40, frameMicros: 10_000))),
        .speaking(true, overhearing: AudioFormat(sampleRate: 8_000, bits: 16)),
        .speakerStats("ble_rejected_bytes=0 silence_blocks=3"), .speakerStats(""),
        .speechCut, .bargeIn, .overheard([0x00, 0x01]), .glance,
    ]

    @Test func photoSettingsDefaults() {
        #expect(PhotoSettings() == PhotoSettings(quality: 2, resolution: 512))
        #expect(PhotoSettings().isValid)
    }

    @Test("every message round-trips, prefix and code in front")
    func roundTrip() throws {
        for message in Self.all {
            let bytes = message.encoded
            #expect(try AppMessage.decode(bytes) == message)
            #expect(bytes[0] == 0x01)
            #expect(bytes[1] == message.code)
            #expect(message.name != "unknown")
        }
        #expect(Set(Self.all.map(\.code)).count == 32)
        #expect(
            Self.all.allSatisfy { ($0.code < 0x80) == [0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x1A, 0x1B, 0x1C, 0x1D, 0x1E].contains($0.code) })
    }

    @Test("byte fixtures as the Lua app sends and reads them")
    func fixtures() throws {
        #expect(AppMessage.display("Hi").encoded == [0x01, 0x10, 0x48, 0x69])
        #expect(AppMessage.response("é").encoded == [0x01, 0x11, 0xC3, 0xA9])
        #expect(AppMessage.answerEnd.encoded == [0x01, 0x13])
        #expect(AppMessage.stopRecording.encoded == [0x01, 0x15])
        #expect(AppMessage.capture(PhotoSettings(quality: 3, resolution: 512)).encoded == [0x01, 0x16, 3, 0x02, 0x00])
        #expect(AppMessage.photoSettings(PhotoSettings(quality: 1, resolution: 720)).encoded == [0x01, 0x17, 1, 0x02, 0xD0])
        #expect(try AppMessage.decode([0x01, 0x81] + Array("abc".utf8)) == .ready("abc"))
        #expect(try AppMessage.decode([0x01, 0x82, 8, 16]) == .audioStart(AudioFormat(sampleRate: 8000, bits: 16)))
        #expect(try AppMessage.decode([0x01, 0x82, 16, 8]) == .audioStart(AudioFormat(sampleRate: 16000, bits: 8)))
        // µ-law: a third byte, 1, after [kHz, 8].
        #expect(try AppMessage.decode([0x01, 0x82, 16, 8, 1]) == .audioStart(AudioFormat(sampleRate: 16000, bits: 8, codec: .muLaw)))
        #expect(AppMessage.audioStart(AudioFormat(sampleRate: 8000, bits: 8, codec: .muLaw)).encoded == [0x01, 0x82, 8, 8, 1])
        #expect(
            try AppMessage.decode([0x01, 0x82, 16, 0, 40, 100])
                == .audioStart(AudioFormat(sampleRate: 16000, bits: 16, codec: .lc3(frameBytes: 40, frameMicros: 10_000))))
        #expect(try AppMessage.decode([0x01, 0x83, 0x01, 0xFE]) == .audioData([0x01, 0xFE]))
        #expect(try AppMessage.decode([0x01, 0x8B, 87]) == .battery(87))
        #expect(try AppMessage.decode([0x01, 0x8A]) == .cancelled)
        #expect(try AppMessage.decode([0x01, 0x8C]) == .tap)
        #expect(AppMessage.listen(true).encoded == [0x01, 0x1A, 1])
        #expect(AppMessage.listen(false).encoded == [0x01, 0x1A, 0])
        #expect(AppMessage.wake("Hi").encoded == [0x01, 0x1B, 0x48, 0x69])
        #expect(try AppMessage.decode([0x01, 0x8D, 0x05, 0xFB]) == .listening([0x05, 0xFB]))
        // The glance: three taps on idle glasses (glassd_app.lua sends [0x93] alone).
        #expect(try AppMessage.decode([0x01, 0x93]) == .glance)
        #expect(AppMessage.glance.encoded == [0x01, 0x93])
        #expect(AppMessage.glance.name == "glance")
    }

    @Test("malformed frames are typed errors, each of a kind for the logs")
    func malformed() {
        typealias E = AppMessage.DecodeError
        let cases: [([UInt8], E)] = [
            ([], .tooShort(0)),
            ([0x01], .tooShort(1)),
            ([0x31, 0x10], .missingPrefix(0x31)),
            ([0x01, 0x00], .unknownCode(0x00)),
            ([0x01, 0x1F], .unknownCode(0x1F)),
            ([0x01, 0x1C, 0, 16], .badPayload("speakStart")),
            ([0x01, 0x1C, 0, 16, 50], .badPayload("speakStart")),  // no listen
            ([0x01, 0x1C, 0, 24, 50, 0], .badPayload("speakStart")),
            ([0x01, 0x1C, 0, 16, 101, 0], .badPayload("speakStart")),
            ([0x01, 0x1C, 0, 16, 50, 2], .badPayload("speakStart")),
            ([0x01, 0x1C, 1, 16, 50, 40, 100], .badPayload("speakStart")),  // no listen
            ([0x01, 0x1C, 1, 16, 50, 40, 0], .badPayload("speakStart")),
            ([0x01, 0x1C, 1, 16, 50, 10, 100, 0], .badPayload("speakStart")),
            ([0x01, 0x1C, 1, 16, 50, 40, 90, 0], .badPayload("speakStart")),
            ([0x01, 0x1C, 2, 16, 50, 0], .badPayload("speakStart")),
            ([0x01, 0x1E, 0], .badPayload("bargeIn")),
            ([0x01, 0x8F, 0, 16, 16], .badPayload("speaking")),  // not speaking, yet overhearing
            ([0x01, 0x8F, 1, 16], .badPayload("speaking")),
            ([0x01, 0x8F, 1, 16, 0, 40], .badPayload("speaking")),
            ([0x01, 0x8F, 2], .badPayload("speaking")),
            ([0x01, 0x1D, 0], .badPayload("speakStop")),
            ([0x01, 0x90, 0xC3], .badPayload("speakerStats")),
            ([0x01, 0x91, 1], .badPayload("speechCut")),
            ([0x01, 0x1A], .badPayload("listen")),
            ([0x01, 0x1A, 2], .badPayload("listen")),
            ([0x01, 0x8D], .badPayload("listening")),
            ([0x01, 0x19, 0x00], .badPayload("pagesShow")),
            ([0x01, 0x80], .unknownCode(0x80)),
            ([0x01, 0x8E], .badPayload("charging")),
            ([0x01, 0x8E, 2], .badPayload("charging")),
            ([0x01, 0x8F], .badPayload("speaking")),
            ([0x01, 0x92], .badPayload("overheard")),
            ([0x01, 0x93, 0x00], .badPayload("glance")),
            ([0x01, 0x94], .unknownCode(0x94)),
            ([0x01, 0x11, 0xC3], .badPayload("response")),  // cut UTF-8
            ([0x01, 0x10, 0xFF, 0x41], .badPayload("display")),
            ([0x01, 0x12, 0xED, 0xA0, 0x80], .badPayload("error")),  // a surrogate
            ([0x01, 0x14, 0xC0, 0xAF], .badPayload("alert")),  // overlong
            ([0x01, 0x81], .badPayload("ready")),
            ([0x01, 0x13, 0x00], .badPayload("answerEnd")),
            ([0x01, 0x15, 0x01], .badPayload("stopRecording")),
            ([0x01, 0x84, 0x00], .badPayload("audioEnd")),
            ([0x01, 0x8A, 0x00], .badPayload("cancelled")),
            ([0x01, 0x82, 8], .badPayload("audioStart")),
            ([0x01, 0x82, 8, 16, 0], .badPayload("audioStart")),
            ([0x01, 0x82, 16, 16, 1], .badPayload("audioStart")),  // µ-law is 8-bit
            ([0x01, 0x82, 16, 8, 2], .badPayload("audioStart")),
            ([0x01, 0x82, 16, 0, 40], .badPayload("audioStart")),
            ([0x01, 0x82, 16, 0, 19, 100], .badPayload("audioStart")),
            ([0x01, 0x82, 16, 0, 40, 90], .badPayload("audioStart")),
            ([0x01, 0x82, 16, 1, 40, 100], .badPayload("audioStart")),
            ([0x01, 0x82, 44, 16], .badPayload("audioStart")),
            ([0x01, 0x82, 8, 24], .badPayload("audioStart")),
            ([0x01, 0x82, 12, 8], .badPayload("audioStart")),
            ([0x01, 0x83], .badPayload("audioData")),
            ([0x01, 0x86], .badPayload("photoData")),
            ([0x01, 0x8B], .badPayload("battery")),
            ([0x01, 0x8B, 101], .badPayload("battery")),
            ([0x01, 0x8B, 50, 50], .badPayload("battery")),
            ([0x01, 0x16, 2, 0x02], .badPayload("capture")),
            ([0x01, 0x16, 5, 0x02, 0x00], .badPayload("capture")),  // quality 5
            ([0x01, 0x17, 2, 0x00, 0xFE], .badPayload("photoSettings")),  // 254
            ([0x01, 0x17, 2, 0x02, 0xD2], .badPayload("photoSettings")),  // 722
            ([0x01, 0x17, 2, 0x02, 0x01], .badPayload("photoSettings")),  // 513, odd
        ]
        for (bytes, expected) in cases {
            #expect(throws: expected, "\(bytes)") { try AppMessage.decode(bytes) }
        }
        #expect(E.tooShort(1).kind == "a frame too short")
        #expect(E.missingPrefix(0x31).kind == "a frame without the data prefix")
        #expect(E.unknownCode(0x99).kind == E.unknownCode(0x42).kind)
        #expect(E.badPayload("battery").kind == "a bad battery payload")
    }

    @Test("the edges of the photo settings")
    func photoEdges() throws {
        for (quality, resolution, valid) in [(0, 256, true), (4, 720, true), (2, 258, true), (2, 254, false), (2, 722, false), (2, 257, false), (5, 512, false)] {
            let settings = PhotoSettings(quality: UInt8(quality), resolution: UInt16(resolution))
            #expect(settings.isValid == valid)
            if valid { #expect(try AppMessage.decode(AppMessage.capture(settings).encoded) == .capture(settings)) }
        }
    }

    @Test("the speaker's messages on the wire: PCM [0, kHz, volume, listen], LC3 with its frame bytes and duration in 100 µs; speaking with the overheard format; bargeIn, overheard")
    func speakerBytes() throws {
        #expect(
            AppMessage.speakStart(SpeakerFormat(codec: .pcm16, sampleRate: 16_000), volume: 60, listen: false).encoded == [0x01, 0x1C, 0, 16, 60, 0])
        let lc3 = AppMessage.speakStart(
            SpeakerFormat(codec: .lc3(frameBytes: 40, frameMicros: 10_000), sampleRate: 16_000), volume: 100, listen: true)
        #expect(lc3.encoded == [0x01, 0x1C, 1, 16, 100, 40, 100, 1])
        #expect(
            try AppMessage.decode([0x01, 0x8F, 1, 16, 0, 40, 100])
                == .speaking(true, overhearing: AudioFormat(sampleRate: 16_000, bits: 16, codec: .lc3(frameBytes: 40, frameMicros: 10_000))))
        #expect(AppMessage.bargeIn.encoded == [0x01, 0x1E])
        #expect(try AppMessage.decode([0x01, 0x92, 7, 8]) == .overheard([7, 8]))
        #expect(try AppMessage.decode([0x01, 0x90] + Array("silence_blocks=2".utf8)) == .speakerStats("silence_blocks=2"))
        #expect(try AppMessage.decode([0x01, 0x8F, 0]) == .speaking(false, overhearing: nil))
        #expect(try AppMessage.decode([0x01, 0x91]) == .speechCut)
    }
}
