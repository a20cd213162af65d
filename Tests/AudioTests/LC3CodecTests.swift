// SPDX-License-Identifier: GPL-2.0-or-later
import Audio
import Concurrency
import Foundation
import Testing

@Suite("LC3 encoder and decoder", .timeLimit(.minutes(2)))
struct LC3CodecTests {
    static func sine(_ hz: Double, rate: Int, count: Int, amplitude: Double = 10_000) -> [Int16] {
        (0..<count).map { Int16(amplitude * sin(2 * Double.pi * hz * Double($0) / Double(rate))) }
    }

    /// The recorded question (8 kHz, 8-bit) at 16 kHz.
    static func speech16k() throws -> [Int16] {
        try PCMConverter.resample(PCM8.widen(Fixture.bytes("speech-clean")), from: 8_000, to: 16_000)
    }

    /// Encodes `input` in chunks of `chunk` samples, flushes, decodes the whole.
    static func roundTrip(_ input: [Int16], format: LC3Format, pcmRate: Int? = nil, chunk: Int = 1_000) throws
        -> (bytes: [UInt8], decoded: [Int16], delay: Int)
    {
        let encoder = try LC3Encoder(format: format, pcmRate: pcmRate)
        var bytes: [UInt8] = []
        for start in stride(from: 0, to: input.count, by: chunk) {
            bytes += encoder.encode(input[start..<min(input.count, start + chunk)])
        }
        bytes += encoder.flush()
        let decoder = try LC3Decoder(format: format)
        let decoded = decoder.decode(bytes)
        #expect(decoder.framesDecoded == bytes.count / format.frameBytes && decoder.framesInvalid == 0)
        #expect(decoder.bufferedBytes == 0)
        return (bytes, decoded, decoder.delaySamples)
    }

    /// Where two sample runs first differ (nil: equal): a failing `==` on whole arrays would make
    /// Swift Testing diff tens of thousands of samples for its message.
    static func firstDifference<T: Equatable>(_ a: [T], _ b: [T]) -> Int? {
        let common = min(a.count, b.count)
        return (0..<common).first { a[$0] != b[$0] } ?? (a.count == b.count ? nil : common)
    }

    /// Signal to error of `decoded` against `reference`, `delay` samples later, in dB. Zeros, noise or
    /// audio out of step come out at 0 dB or below.
    static func snr(_ reference: [Int16], _ decoded: [Int16], delay: Int) -> Double {
        var signal = 0.0
        var error = 0.0
        for (i, x) in reference.enumerated() {
            let y = delay + i < decoded.count ? Double(decoded[delay + i]) : 0
            signal += Double(x) * Double(x)
            error += (Double(x) - y) * (Double(x) - y)
        }
        return 10 * log10(signal / max(error, 1))
    }

    @Test(
        "a sine comes back in step, above a floor that zeros or misplaced samples miss",
        arguments: [
            // liblc3 gives a 440 Hz tone about 20 dB at these rates (68 dB at 64 kbps).
            (16_000, LC3Format.FrameDuration.ms10, 32_000, 15.0),
            (16_000, .ms10, 16_000, 15),
            (16_000, .ms7_5, 32_000, 15),
            (8_000, .ms10, 24_000, 15),
        ])
    func sineRoundTrip(rate: Int, duration: LC3Format.FrameDuration, bitrate: Int, floor: Double) throws {
        let format = try LC3Format(sampleRate: rate, frameDuration: duration, bitrate: bitrate)
        let input = Self.sine(440, rate: rate, count: rate)  // 1 s
        let (bytes, decoded, delay) = try Self.roundTrip(input, format: format, chunk: 333)
        #expect(bytes.count % format.frameBytes == 0)
        // Every input sample is out: the flush pushed the codec's delay through.
        #expect(decoded.count >= input.count + delay && decoded.count < input.count + delay + format.samplesPerFrame)
        let snr = Self.snr(input, decoded, delay: delay)
        #expect(snr > floor, "\(format): \(snr) dB")
        // Half a period out of step fails the floor: it checks alignment, not just level.
        #expect(Self.snr(input, decoded, delay: delay + rate / 880) < 0)
    }

    @Test("recorded speech comes back at 32 and 16 kbps, better at 32")
    func speechRoundTrip() throws {
        let speech = try Self.speech16k()
        var snrs: [Int: Double] = [:]
        for bitrate in [32_000, 16_000] {
            let format = try LC3Format(sampleRate: 16_000, frameDuration: .ms10, bitrate: bitrate)
            let (bytes, decoded, delay) = try Self.roundTrip(speech, format: format)
            #expect(bytes.count == (speech.count + delay + 159) / 160 * format.frameBytes)
            snrs[bitrate] = Self.snr(speech, decoded, delay: delay)
            // Decoding only zeros would be 0 dB.
            #expect(Self.snr(speech, [Int16](repeating: 0, count: decoded.count), delay: delay) < 0.1)
        }
        #expect(snrs[32_000]! > 10, "\(snrs)")
        #expect(snrs[16_000]! > 5, "\(snrs)")
        #expect(snrs[32_000]! > snrs[16_000]!, "\(snrs)")
    }

    @Test("24 kHz PCM goes straight into a 16 kHz stream (liblc3 downsamples)")
    func downsampling() throws {
        let input = Self.sine(1_000, rate: 24_000, count: 24_000)
        let format = LC3Format.voice
        let (_, decoded, delay) = try Self.roundTrip(input, format: format, pcmRate: 24_000, chunk: 480)
        #expect(decoded.count >= 16_000)
        // The same tone at 16 kHz, a second of it.
        let expected = Self.sine(1_000, rate: 16_000, count: 16_000)
        let snr = Self.snr(expected, decoded, delay: delay)
        #expect(snr > 15, "\(snr) dB")
    }

    @Test("the encoder's output is the same however its input is split; a partial frame waits")
    func encoderSplits() throws {
        let input = try Self.speech16k()
        let whole = try Self.roundTrip(input, format: .voice, chunk: input.count).bytes
        for chunk in [1, 159, 160, 161, 4_096] {
            #expect(Self.firstDifference(try Self.roundTrip(input, format: .voice, chunk: chunk).bytes, whole) == nil, "chunk \(chunk)")
        }
        let encoder = try LC3Encoder(format: .voice)
        #expect(encoder.encode(input[0..<159]).isEmpty)
        #expect(encoder.encode(input[159..<160]).count == 40)
        #expect(encoder.encode(input[160..<480]).count == 80)
        // Nothing owed after the last whole frame but the codec's delay: one silent frame.
        #expect(encoder.flush().count == 40)
        #expect(encoder.flush().isEmpty)
    }

    @Test("frames split anywhere across messages decode as whole frames do")
    func fifoSplits() throws {
        let speech = try Self.speech16k()
        let (bytes, whole, _) = try Self.roundTrip(speech, format: .voice)
        var random = SplitMix64(seed: 31)
        for maxPiece in [1, 3, 39, 41, 100, 600] {
            let decoder = try LC3Decoder(format: .voice)
            var out: [Int16] = []
            var start = 0
            while start < bytes.count {
                let end = min(bytes.count, start + 1 + Int(random.next() % UInt64(maxPiece)))
                let piece = decoder.decode(bytes[start..<end])
                #expect(piece.count % 160 == 0)
                out += piece
                start = end
            }
            #expect(Self.firstDifference(out, whole) == nil, "pieces up to \(maxPiece) bytes")
            #expect(decoder.bufferedBytes == 0)
        }
        let decoder = try LC3Decoder(format: .voice)
        #expect(decoder.decode(bytes[0..<39]).isEmpty)
        #expect(decoder.bufferedBytes == 39)
        #expect(Self.firstDifference(decoder.decode(bytes[39..<81]), Array(whole[0..<320])) == nil)
        #expect(decoder.bufferedBytes == 1)
        decoder.discardBuffered()
        #expect(decoder.bufferedBytes == 0)
    }

    @Test("a lost frame is concealed: one frame of sound where it was due, buffered bytes kept")
    func concealment() throws {
        let input = Self.sine(440, rate: 16_000, count: 3_200)
        let encoder = try LC3Encoder(format: .voice)
        let bytes = encoder.encode(input)
        let decoder = try LC3Decoder(format: .voice, pcmRate: 48_000)
        #expect(decoder.decode(bytes[0..<(10 * 40 + 7)]).count == 10 * 480)
        let filled = decoder.conceal()
        #expect(filled.count == 480)
        #expect(filled.contains { abs(Int($0)) > 1_000 }, "the tone goes on through the lost frame")
        #expect(decoder.framesConcealed == 1 && decoder.framesDecoded == 10)
        #expect(decoder.bufferedBytes == 7)
        #expect(decoder.decode(bytes[(10 * 40 + 7)...]).count == 10 * 480)
    }

    @Test("any bytes decode without a crash: a frame liblc3 cannot read is concealed and counted")
    func garbage() throws {
        var random = SplitMix64(seed: 8)
        for format in [LC3Format.voice, try LC3Format(sampleRate: 8_000, frameDuration: .ms7_5, frameBytes: 400)] {
            let decoder = try LC3Decoder(format: format)
            var total = 0
            var frames = 0
            for length in [0, 1, 19, 20, 39, 40, 41, 400, 4_096] {
                let bytes = (0..<length).map { _ in UInt8(truncatingIfNeeded: random.next()) }
                let before = decoder.bufferedBytes
                let out = decoder.decode(bytes)
                frames += (before + length) / format.frameBytes
                total += out.count
                #expect(out.count == (before + length) / format.frameBytes * format.samplesPerFrame)
            }
            #expect(decoder.framesDecoded + decoder.framesInvalid == frames)
            #expect(total == frames * format.samplesPerFrame)
        }
        // A frame of all ones is not a valid bitstream (liblc3 returns 1 and conceals).
        let decoder = try LC3Decoder(format: .voice)
        #expect(decoder.decode([UInt8](repeating: 0xFF, count: 40)).count == 160)
        #expect(decoder.framesInvalid == 1 && decoder.framesDecoded == 0)
    }

    @Test("an encoder can be handed to another task once (it is not Sendable)")
    func handOver() async throws {
        let encoder = try LC3Encoder(format: .voice)
        let input = Self.sine(440, rate: 16_000, count: 1_600)
        let bytes = await Task { encoder.encode(input) + encoder.flush() }.value
        #expect(bytes.count == 11 * 40)
    }
}
