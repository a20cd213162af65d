// SPDX-License-Identifier: GPL-2.0-or-later
import Audio
import Testing

@Suite("LC3 formats", .timeLimit(.minutes(5)))
struct LC3FormatTests {
    @Test(
        "frame size and samples per frame from the bitrate (bitrate × duration / 8, rounded down)",
        arguments: [
            (16_000, LC3Format.FrameDuration.ms10, 32_000, 40, 160, 4_000.0),
            (16_000, .ms10, 24_000, 30, 160, 3_000),
            (16_000, .ms10, 16_000, 20, 160, 2_000),
            (8_000, .ms10, 16_000, 20, 80, 2_000),
            (16_000, .ms7_5, 32_000, 30, 120, 4_000),
            (16_000, .ms7_5, 24_000, 22, 120, 22 / 0.0075),
            (8_000, .ms7_5, 32_000, 30, 60, 4_000),
            (48_000, .ms10, 320_000, 400, 480, 40_000),
        ])
    func frameSizes(rate: Int, duration: LC3Format.FrameDuration, bitrate: Int, bytes: Int, samples: Int, perSecond: Double)
        throws
    {
        let format = try LC3Format(sampleRate: rate, frameDuration: duration, bitrate: bitrate)
        #expect(format.frameBytes == bytes)
        #expect(format.samplesPerFrame == samples)
        #expect(abs(format.bytesPerSecond - perSecond) < 0.01)
        #expect(format.bitrate <= bitrate)
        #expect(try LC3Format(sampleRate: rate, frameDuration: duration, frameBytes: bytes) == format)
    }

    @Test("glassd's voice format is 16 kHz, 10 ms, 40-byte frames: 4000 bytes a second")
    func voice() {
        #expect(LC3Format.voice.sampleRate == 16_000)
        #expect(LC3Format.voice.frameDuration == .ms10)
        #expect(LC3Format.voice.frameBytes == 40)
        #expect(LC3Format.voice.bitrate == 32_000)
    }

    @Test("Halo's 8 kbps is refused, saying liblc3 needs 16 kbps")
    func bitrateBelowMinimum() {
        for bitrate in [8_000, 15_999, 0, -16_000, Int.min] {
            #expect(throws: LC3Error.bitrateBelowMinimum(bitrate)) {
                try LC3Format(sampleRate: 16_000, frameDuration: .ms10, bitrate: bitrate)
            }
        }
        #expect(LC3Error.bitrateBelowMinimum(8_000).description.contains("liblc3 needs ≥ 16 kbps"))
    }

    @Test("frames outside liblc3's 20–400 bytes are refused: 16 kbps at 7.5 ms is 15 bytes")
    func frameBytesOutOfRange() {
        #expect(throws: LC3Error.frameBytesOutOfRange(15, .ms7_5)) {
            try LC3Format(sampleRate: 16_000, frameDuration: .ms7_5, bitrate: 16_000)
        }
        #expect(throws: LC3Error.frameBytesOutOfRange(500, .ms10)) {
            try LC3Format(sampleRate: 16_000, frameDuration: .ms10, bitrate: 400_000)
        }
        #expect(throws: LC3Error.frameBytesOutOfRange(Int.max, .ms10)) {
            try LC3Format(sampleRate: 16_000, frameDuration: .ms10, bitrate: Int.max)
        }
        for bytes in [19, 401, 0, -1] {
            #expect(throws: LC3Error.frameBytesOutOfRange(bytes, .ms10)) {
                try LC3Format(sampleRate: 16_000, frameDuration: .ms10, frameBytes: bytes)
            }
        }
        #expect(LC3Error.frameBytesOutOfRange(15, .ms7_5).description.contains("21334"))
    }

    @Test("rates liblc3 does not code are refused", arguments: [0, 11_025, 22_050, 44_100, 96_000, -8_000])
    func unsupportedRate(rate: Int) {
        #expect(throws: LC3Error.unsupportedSampleRate(rate)) {
            try LC3Format(sampleRate: rate, frameDuration: .ms10, frameBytes: 40)
        }
    }

    @Test("the PCM side runs at a coded rate at or above the codec's")
    func pcmRates() throws {
        let format = try LC3Format(sampleRate: 16_000, frameDuration: .ms10, frameBytes: 40)
        for rate in [8_000, 22_050, 44_100, 0] {
            #expect(throws: LC3Error.unsupportedPCMRate(pcm: rate, codec: 16_000)) { try LC3Encoder(format: format, pcmRate: rate) }
            #expect(throws: LC3Error.unsupportedPCMRate(pcm: rate, codec: 16_000)) { try LC3Decoder(format: format, pcmRate: rate) }
        }
        #expect(try LC3Encoder(format: format, pcmRate: 24_000).samplesPerFrame == 240)
        #expect(try LC3Decoder(format: format, pcmRate: 48_000).samplesPerFrame == 480)
    }
}
