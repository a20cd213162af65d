// SPDX-License-Identifier: GPL-2.0-or-later
@testable import Audio
import Foundation
import Testing

@Suite("Speech audio: streamed WAV or raw PCM to 16 kHz mono", .timeLimit(.minutes(5)))
struct SpeechAudioTests {
    private static func le16(_ v: Int) -> [UInt8] { (0..<2).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }
    private static func le32(_ v: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }

    /// A WAV stream: `extra` chunks (id, body) between fmt and data; `dataSize`/`riffSize` nil: the real ones.
    private static func wav(
        _ samples: [Int16], rate: Int = 16_000, channels: Int = 1, bits: Int = 16, tag: Int = 1,
        extra: [(String, [UInt8])] = [], dataSize: Int? = nil, riffSize: Int? = nil, trailer: [UInt8] = []
    ) -> [UInt8] {
        let data = samples.flatMap { le16(Int($0)) }
        var chunks = Array("fmt ".utf8) + le32(16) + le16(tag) + le16(channels) + le32(rate)
            + le32(rate * channels * bits / 8) + le16(channels * bits / 8) + le16(bits)
        for (id, body) in extra { chunks += Array(id.utf8) + le32(body.count) + body + (body.count % 2 == 1 ? [0] : []) }
        chunks += Array("data".utf8) + le32(dataSize ?? data.count) + data + trailer
        return Array("RIFF".utf8) + le32(riffSize ?? (4 + chunks.count)) + Array("WAVE".utf8) + chunks
    }

    /// All of `bytes` fed in pieces cut at `cuts`, then finished.
    private static func decode(_ bytes: [UInt8], _ input: SpeechAudio.Input = .wav, cuts: [Int]) throws -> [Int16] {
        var audio = try SpeechAudio(input)
        var out: [Int16] = []
        var start = 0
        for cut in cuts.filter({ $0 > 0 && $0 < bytes.count }).sorted() + [bytes.count] where cut >= start {
            out += try audio.feed(Array(bytes[start..<cut]))
            start = cut
        }
        return out + (try audio.finish())
    }

    private static func ramp(_ count: Int) -> [Int16] { (0..<count).map { Int16(truncatingIfNeeded: $0 * 37 - 9_000) } }

    @Test("a 16 kHz mono WAV comes out sample for sample, whatever byte of the header or data it is cut at")
    func everyCut() throws {
        let samples = Self.ramp(300)
        let extra: [(String, [UInt8])] = [("LIST", Array("INFOISFT\u{5}\0\0\0espek".utf8))]  // odd size: padded
        for bytes in [Self.wav(samples), Self.wav(samples, extra: extra)] {
            let header = bytes.count - 600
            for cut in 0...(header + 3) {
                #expect(try Self.decode(bytes, cuts: [cut]) == samples, "cut at \(cut)")
            }
            #expect(try Self.decode(bytes, cuts: Array(0..<bytes.count)) == samples, "one byte at a time")
            #expect(try Self.decode(bytes, cuts: Array(stride(from: 1, to: bytes.count, by: 3))) == samples, "odd pieces")
        }
    }

    @Test("streamed sizes (0, 0xFFFFFFFF, espeak-ng --stdout's 0x7FFFF000) mean: to the end of the stream")
    func streamedSizes() throws {
        let samples = Self.ramp(500)
        for size in [0, 0xFFFF_FFFF, 0x7FFF_F000] {
            let bytes = Self.wav(samples, dataSize: size, riffSize: size == 0x7FFF_F000 ? 0x7FFF_F024 : size)
            #expect(try Self.decode(bytes, cuts: [7, 40, 45, 101]) == samples, "size \(size)")
        }
    }

    @Test("a sized data chunk ends where it says: a chunk after it is no audio")
    func sizedData() throws {
        let samples = Self.ramp(100)
        let bytes = Self.wav(samples, trailer: Array("LIST".utf8) + Self.le32(4) + [1, 2, 3, 4])
        for cut in [0, 44, 243, 244, 245, 250] {
            #expect(try Self.decode(bytes, cuts: [cut]) == samples, "cut at \(cut)")
        }
    }

    @Test("stereo is mixed down to mono")
    func stereo() throws {
        let frames: [Int16] = [1_000, 3_000, -2_000, -4_000, 32_767, 32_767, -32_768, -32_768]
        let bytes = Self.wav(frames, channels: 2)
        for cut in [0, 45, 46, 47, 49] {
            #expect(try Self.decode(bytes, cuts: [cut]) == [2_000, -3_000, 32_767, -32_768])
        }
    }

    @Test("other rates are resampled to 16 kHz: the count is the duration's, and splitting changes nothing", arguments: [22_050, 24_000, 8_000, 48_000])
    func resampled(rate: Int) throws {
        let samples = (0..<rate / 2).map { Int16(8_000 * sin(2 * Double.pi * 440 * Double($0) / Double(rate))) }
        let bytes = Self.wav(samples, rate: rate)
        let whole = try Self.decode(bytes, cuts: [])
        #expect(whole.count == samples.count * 16_000 / rate)
        #expect(try Self.decode(bytes, cuts: [3, 44, 45, 1_001, 4_096]) == whole)
        // The tone is still there: its energy (RMS) survives within a few percent.
        func rms(_ s: [Int16]) -> Double { (s.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(max(1, s.count))).squareRoot() }
        #expect(abs(rms(whole) - rms(samples)) / rms(samples) < 0.05, "\(rms(whole)) vs \(rms(samples))")
    }

    @Test("raw PCM at 24 kHz (OpenAI's pcm): 1.5 s in, 1.5 s at 16 kHz out, cut inside samples or not")
    func rawPCM() throws {
        let samples = (0..<36_000).map { Int16(6_000 * sin(2 * Double.pi * 300 * Double($0) / 24_000)) }
        let bytes = samples.flatMap { Self.le16(Int($0)) }
        let whole = try Self.decode(bytes, .pcm(rate: 24_000), cuts: [])
        #expect(whole.count == 24_000)
        #expect(try Self.decode(bytes, .pcm(rate: 24_000), cuts: [1, 2, 3, 999, 1_001, 50_001]) == whole)
        // 16 kHz raw PCM passes through.
        #expect(try Self.decode(bytes, .pcm(rate: 16_000), cuts: [1, 5]) == samples)
    }

    @Test("what is not audio it takes is refused with a clear error, and the rest of the stream is not read")
    func refused() throws {
        let samples = Self.ramp(10)
        let cases: [([UInt8], String)] = [
            (Array("ID3\u{3}\0\0\0\0\0\0\0\0\0\0\0\0".utf8), "not a WAV stream"),
            (Array("{\"error\":{\"message\":\"x\"}}".utf8), "not a WAV stream"),
            (Self.wav(samples, bits: 8), "not 16-bit PCM"),
            (Self.wav(samples, tag: 3), "not 16-bit PCM"),
            (Self.wav(samples, channels: 3), "3 channels"),
            (Self.wav(samples, rate: 0), "sample rate of 0 Hz"),
            (Array("RIFF".utf8) + Self.le32(100) + Array("WAVEdata".utf8) + Self.le32(4) + [0, 0, 0, 0], "without its format first"),
            (Array("RIFF".utf8) + Self.le32(100) + Array("WAVEJUNK".utf8) + Self.le32(1 << 20), "64 KiB"),
        ]
        for (bytes, why) in cases {
            var audio = try SpeechAudio(.wav)
            do {
                _ = try audio.feed(bytes)
                _ = try audio.finish()
                Issue.record("accepted: \(why)")
            } catch {
                guard case .unsupportedInput(let message) = error else { Issue.record("\(error)"); continue }
                #expect(message.contains(why), "\(message)")
            }
        }
        // A stream cut inside its header: no audio, said at the end.
        var cut = try SpeechAudio(.wav)
        #expect(try cut.feed(Array(Self.wav(samples).prefix(30))) == [])
        #expect(throws: AudioError.self) { try cut.finish() }
        #expect(throws: AudioError.self) { try SpeechAudio(.pcm(rate: 0)) }
    }

    @Test("any bytes, split anywhere, return samples or throw AudioError: no trap, no hang")
    func garbage() throws {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int(truncatingIfNeeded: state >> 33)
        }
        let seeds = [
            Self.wav(Self.ramp(200)), Self.wav(Self.ramp(200), rate: 22_050, dataSize: 0x7FFF_F000),
            Self.wav(Self.ramp(200), channels: 2, extra: [("LIST", [1, 2, 3])]),
        ]
        for i in 0..<600 {
            var bytes = seeds[i % seeds.count]
            switch next() % 3 {
            case 0: bytes = Array(bytes.prefix(next() % (bytes.count + 1)))
            case 1: for _ in 0..<(1 + next() % 8) { bytes[next() % bytes.count] = UInt8(truncatingIfNeeded: next()) }
            default: bytes = (0..<(next() % 400)).map { _ in UInt8(truncatingIfNeeded: next()) }
            }
            let cuts = (0..<(next() % 6)).map { _ in next() % (bytes.count + 1) }
            for input in [SpeechAudio.Input.wav, .pcm(rate: 24_000)] {
                do {
                    let samples = try Self.decode(bytes, input, cuts: cuts)
                    // Never more than the bytes could hold at 16 kHz from the lowest rate taken (4 kHz).
                    #expect(samples.count <= bytes.count * 2 + 16)
                } catch is AudioError {}
            }
        }
    }

    @Test("s16le bytes of samples")
    func bytes() {
        #expect(SpeechAudio.littleEndian([1, -1, 0x1234, -32_768]) == [1, 0, 0xFF, 0xFF, 0x34, 0x12, 0x00, 0x80])
    }
}
