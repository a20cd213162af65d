// SPDX-License-Identifier: GPL-2.0-or-later
@testable import Audio
import Foundation
import Testing

@Suite("8 → 16 kHz resampler", .timeLimit(.minutes(5)))
struct ResamplerTests {
    private func resample(_ input: [Int16], chunk: Int) throws -> [Int16] {
        let resampler = try Resampler(from: 8_000, to: 16_000)
        var out: [Int16] = []
        var start = 0
        while start < input.count {
            let end = min(input.count, start + chunk)
            out += resampler.process(Array(input[start..<end]))
            start = end
        }
        return out + resampler.flush()
    }

    private func sine(_ hz: Double, count: Int) -> [Int16] {
        (0..<count).map { Int16(10_000 * sin(2 * Double.pi * hz * Double($0) / 8_000)) }
    }

    @Test("N samples in, exactly 2N out after the flush, however the input is split", arguments: [1, 2, 244, 4096])
    func count(chunk: Int) throws {
        for n in [0, 1, 7, 244, 8_000, 12_345] {
            #expect(try resample(sine(440, count: n), chunk: chunk).count == 2 * n, "n = \(n)")
        }
    }

    @Test("splitting the input changes no sample")
    func chunking() throws {
        let input = sine(700, count: 4_000)
        let whole = try resample(input, chunk: input.count)
        #expect(try resample(input, chunk: 1) == whole)
        #expect(try resample(input, chunk: 244) == whole)
    }

    @Test("a 1 kHz sine stays a 1 kHz sine, in time with its input")
    func sinePreserved() throws {
        let input = sine(1_000, count: 8_000)  // 1 s
        let out = try resample(input, chunk: 244)
        // Away from the edges, where the filter starts from and ends on zeros.
        let middle = Array(out[1_000..<15_000])  // 0.875 s
        let crossings = zip(middle, middle.dropFirst()).filter { ($0 < 0) != ($1 < 0) }.count
        #expect(abs(crossings - 1_750) <= 2, "\(crossings) zero crossings in 0.875 s")
        // The filter's delay was taken out: every other output sample is the input sample.
        let error = (500..<7_500).map { abs(Int(out[2 * $0]) - Int(input[$0])) }.max() ?? 0
        #expect(error <= 1, "largest difference \(error)")
    }
}
