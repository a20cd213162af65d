// SPDX-License-Identifier: GPL-2.0-or-later
import Agent
import Audio
import Foundation
import Testing

@Suite("Audio uplink", .timeLimit(.minutes(5)))
struct AudioUplinkTests {
    /// The samples a message carries, or nil if it is not `{"audio":"<base64>"}`.
    private func samples(_ message: String) -> [Int16]? {
        guard let json = try? JSONDecoder().decode([String: String].self, from: Data(message.utf8)), json.count == 1,
            let b64 = json["audio"], let data = Data(base64Encoded: b64), data.count % 2 == 0
        else { return nil }
        let bytes = Array(data)
        return stride(from: 0, to: bytes.count, by: 2).map {
            Int16(bitPattern: UInt16(bytes[$0]) | UInt16(bytes[$0 + 1]) << 8)
        }
    }

    /// A 440 Hz tone, 8 kHz 8-bit as the Monocle sends it.
    private func tone(seconds: Double) -> [UInt8] {
        (0..<Int(seconds * 8000)).map { i in
            UInt8(bitPattern: Int8(60 * sin(2 * Double.pi * 440 * Double(i) / 8000)))
        }
    }

    @Test("40 ms pieces of 640 samples; the messages carry exactly the processed samples")
    func pieces() throws {
        let uplink = try AudioUplink(input: PCMInput(sampleRate: 8_000, bits: 8), voice: VoiceSettings())
        #expect(uplink.pieceSamples == 640)
        let audio = tone(seconds: 1.03)
        var sent: [Int16] = []
        var heard: [Int16] = []
        var start = 0
        while start < audio.count {
            let end = min(audio.count, start + 244)
            let out = uplink.append(Array(audio[start..<end]))
            heard += out.samples
            for message in out.messages {
                let piece = try #require(samples(message))
                #expect(piece.count == 640)
                sent += piece
            }
            start = end
        }
        #expect(sent.count % 640 == 0)
        #expect(heard.starts(with: sent))
        #expect(sent.count == heard.count / 640 * 640)
        let rest = uplink.finish()
        #expect(rest.count == 1)
        let last = try #require(rest.first.flatMap(samples))
        #expect(last.count > 0 && last.count < 640)
        #expect(uplink.finish().isEmpty)
        // 1.03 s at 16 kHz, give or take the resampler's delay.
        #expect(abs((sent.count + last.count) - 16_480) < 200)
    }

    @Test("16 kHz 16-bit input, and a piece length kept within 20–100 ms")
    func pieceLength() throws {
        #expect(
            try AudioUplink(
                input: PCMInput(sampleRate: 16_000, bits: 16), voice: VoiceSettings(), piece: .milliseconds(20)
            ).pieceSamples == 320)
        #expect(try AudioUplink(input: PCMInput(sampleRate: 8_000, bits: 8), voice: VoiceSettings(), piece: .milliseconds(5)).pieceSamples == 320)
        #expect(try AudioUplink(input: PCMInput(sampleRate: 8_000, bits: 8), voice: VoiceSettings(), piece: .seconds(1)).pieceSamples == 1600)
        let uplink = try AudioUplink(
            input: PCMInput(sampleRate: 16_000, bits: 16), voice: VoiceSettings(), piece: .milliseconds(100))
        let out = uplink.append([UInt8](repeating: 0, count: 2 * 3200))
        #expect(out.messages.count == 2)
        #expect(out.samples.count == 3200)
        #expect(out.messages.allSatisfy { samples($0)?.count == 1600 })
    }

    @Test("the end of speech is reported once")
    func ended() throws {
        let uplink = try AudioUplink(input: PCMInput(sampleRate: 8_000, bits: 8), voice: VoiceSettings(maximumLength: .milliseconds(500)))
        let first = uplink.append(tone(seconds: 0.3))
        #expect(!first.ended)
        let second = uplink.append(tone(seconds: 0.5))
        #expect(second.ended)
        let third = uplink.append(tone(seconds: 0.5))
        #expect(!third.ended && third.messages.isEmpty && third.samples.isEmpty)
    }

    @Test("an input the recorder does not take is refused")
    func unsupported() {
        #expect(throws: AudioError.unsupportedInput("44100 Hz 16-bit")) {
            try AudioUplink(input: PCMInput(sampleRate: 44_100, bits: 16), voice: VoiceSettings())
        }
    }
}
