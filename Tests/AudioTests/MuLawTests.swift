// SPDX-License-Identifier: GPL-2.0-or-later
import Audio
import Testing

@Suite("G.711 µ-law", .timeLimit(.minutes(5)))
struct MuLawTests {
    @Test("codes decode to G.711's values (worked out by hand from the standard's segment table)")
    func vectors() {
        // 0xFF and 0x7F are +0 and -0; 0x80 and 0x00 the loudest; 0xF0: segment 0, step 15 (8 × 15);
        // 0xE5: segment 1, step 10 ((8 × 10 + 132) × 2 - 132); 0x1A: negative, segment 6, step 5.
        let codes: [UInt8] = [0xFF, 0x7F, 0x80, 0x00, 0xF0, 0x70, 0xE5, 0x1A]
        #expect(MuLaw.expand(codes) == [0, 0, 32124, -32124, 120, -120, 292, -10876])
        #expect(MuLaw.expand([UInt8]()) == [])
    }

    @Test("all 256 codes: the sign bit mirrors, and louder codes are louder in steps that double each segment")
    func all() {
        for code in UInt8(0x80)...0xFF {
            #expect(MuLaw.sample(code) == -MuLaw.sample(code ^ 0x80), "\(code)")
        }
        // 0xFF down to 0x80: 0 up to 32,124, strictly rising.
        let rising = (UInt8(0x80)...0xFF).reversed().map { Int(MuLaw.sample($0)) }
        #expect(zip(rising, rising.dropFirst()).allSatisfy { $0 < $1 })
        // The step within each segment of 16 codes: 8, 16, ... 1024.
        for segment in 0..<8 {
            let steps = Set((0..<15).map { rising[segment * 16 + $0 + 1] - rising[segment * 16 + $0] })
            #expect(steps == [8 << segment], "segment \(segment): \(steps)")
        }
    }

    @Test("a µ-law recording converts as its codes say, at 16 kHz as it is; 16-bit µ-law is refused")
    func converts() throws {
        let converter = try PCMConverter(input: PCMInput(sampleRate: 16_000, bits: 8, muLaw: true))
        #expect(converter.convert([0xFF, 0x80, 0x00, 0xE5]) == [0, 32124, -32124, 292])
        // The same bytes as linear 8-bit are high bytes.
        let linear = try PCMConverter(input: PCMInput(sampleRate: 16_000, bits: 8))
        #expect(linear.convert([0xFF, 0x80, 0x00, 0xE5]) == [-256, -32768, 0, -6912])
        #expect(throws: AudioError.unsupportedInput("16000 Hz 16-bit µ-law")) {
            try PCMConverter(input: PCMInput(sampleRate: 16_000, bits: 16, muLaw: true))
        }
        #expect(try PCMInput(sampleRate: 8_000, bits: 8, lc3Frame: nil, muLaw: true) == PCMInput(sampleRate: 8_000, bits: 8, muLaw: true))
    }
}
