// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation
import Glasses
import Testing

@testable import Product

@Suite("The voice's PCM as the glasses' speaker takes it", .timeLimit(.minutes(5)))
struct SpeakerEncodingTests {
    let tone: [UInt8] = (0..<16_000).flatMap { i -> [UInt8] in
        let v = Int16(8_000 * sin(Double(i) * 2 * .pi * 440 / 16_000))
        return [UInt8(truncatingIfNeeded: v), UInt8(truncatingIfNeeded: v >> 8)]
    }

    @Test("16-bit PCM at 16 kHz goes as it is; at another rate it is refused, not played at the wrong speed")
    func pcm() throws {
        let same = try SpeakerEncoding(SpeakerFormat(codec: .pcm16, sampleRate: 16_000))
        #expect(same.encode(tone) == tone)
        #expect(same.finish().isEmpty)
        #expect(throws: SessionError.self) { try SpeakerEncoding(SpeakerFormat(codec: .pcm16, sampleRate: 8_000)) }
    }

    @Test("LC3 at 32 kbps: a second of speech in whole 40-byte frames, split anywhere, and the last frame at the end")
    func lc3() throws {
        let encoding = try SpeakerEncoding(SpeakerFormat(codec: .lc3(frameBytes: 40, frameMicros: 10_000), sampleRate: 16_000))
        var out: [UInt8] = []
        var rest = tone[...]
        for size in [1, 333, 3_201, 7, 10_000] where !rest.isEmpty {
            out += encoding.encode(Array(rest.prefix(size)))
            rest = rest.dropFirst(size)
        }
        out += encoding.encode(Array(rest))
        #expect(out.count % 40 == 0)
        #expect(out.count == 100 * 40, "100 frames of 10 ms")
        let last = encoding.finish()
        #expect(!last.isEmpty && last.count % 40 == 0, "the codec's delay comes out at the end")
        #expect(throws: (any Error).self) {
            try SpeakerEncoding(SpeakerFormat(codec: .lc3(frameBytes: 10, frameMicros: 10_000), sampleRate: 16_000))
        }
    }
}
