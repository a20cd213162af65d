// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation
import Scene
import Testing

/// The measurements of Scripts/bench-scene (numbers, not a test: it runs only with
/// GLASSD_BENCH_SCENE=1, best in release). Each result is one line `bench-scene: {json}` on stdout.
@Suite(
    "Scene filter benchmark", .serialized, .timeLimit(.minutes(20)),
    .enabled(if: ProcessInfo.processInfo.environment["GLASSD_BENCH_SCENE"] == "1"))
struct SceneBenchmark {
    private static let rounds = Int(ProcessInfo.processInfo.environment["GLASSD_BENCH_ROUNDS"] ?? "") ?? 1000

    /// A run of camera frames: a view held (re-encoded, the head moving a little), turning (blurred),
    /// a hand over the lens (dark), another view, and back.
    static let mixed: [Fixture] = [
        .sharp, .reencoded, .moved, .sharp, .blurred, .blurred, .other, .other, .other, .dark,
        .dark, .other, .blurred, .sharp, .moved, .reencoded, .dark, .other, .other, .sharp,
    ]

    @Test("per JPEG: decode and all three measures, the filter as it stops; a mixed run's share sent")
    func filter() throws {
        let decoder = try JPEGDecoder()
        let jpegs = try Dictionary(uniqueKeysWithValues: Fixture.allCases.map { ($0, try $0.bytes()) })
        for fixture in Fixture.allCases {
            let jpeg = jpegs[fixture]!
            // Every measure whatever the verdict: the cost of a frame that passes.
            let all = try Self.time {
                let image = try decoder.decode(jpeg)
                _ = (image.meanLuminance(), image.laplacianVariance(), image.dHash())
            }
            // The filter as glassd runs it (a fresh one: nothing sent before), stopping at its verdict.
            var verdict = FrameVerdict.error
            let filtered = Self.time {
                var filter = FrameFilter()
                verdict = filter.check(jpeg: jpeg, decoder: decoder).verdict
            }
            let image = try decoder.decode(jpeg)
            Self.emit([
                "what": "fixture", "name": fixture.rawValue, "bytes": jpeg.count, "width": image.width,
                "height": image.height, "all_p50_ms": all.p50, "all_p99_ms": all.p99, "verdict": verdict.rawValue,
                "filter_p50_ms": filtered.p50, "filter_p99_ms": filtered.p99,
            ])
        }

        // The parts, on the sharp frame, and the half-size decode glassd does not use.
        let jpeg = jpegs[.sharp]!
        let image = try decoder.decode(jpeg)
        let half = try JPEGDecoder(maxWidth: 320, maxHeight: 320)
        let halfBlurred = try half.decode(jpegs[.blurred]!).laplacianVariance()
        Self.emit([
            "what": "parts", "decode_ms": try Self.time { _ = try decoder.decode(jpeg) }.p50,
            "luminance_ms": Self.time { _ = image.meanLuminance() }.p50,
            "laplacian_ms": Self.time { _ = image.laplacianVariance() }.p50,
            "dhash_ms": Self.time { _ = image.dHash() }.p50,
            "half_decode_ms": try Self.time { _ = try half.decode(jpeg) }.p50,
            "blurred_variance": try decoder.decode(jpegs[.blurred]!).laplacianVariance(),
            "half_blurred_variance": halfBlurred,
        ])

        var filter = FrameFilter()
        var counts: [String: Int] = [:]
        for fixture in Self.mixed {
            counts[filter.check(jpeg: jpegs[fixture]!, decoder: decoder).verdict.rawValue, default: 0] += 1
        }
        var index = 0
        let perFrame = Self.time {
            _ = filter.check(jpeg: jpegs[Self.mixed[index % Self.mixed.count]]!, decoder: decoder)
            index += 1
        }
        Self.emit([
            "what": "mixed", "frames": Self.mixed.map(\.rawValue), "verdicts": counts,
            "sent": counts["sent", default: 0], "p50_ms": perFrame.p50, "p99_ms": perFrame.p99,
        ])
    }

    /// p50 and p99 in ms of `body` over `rounds` runs, after a few unmeasured ones.
    private static func time(_ body: () throws -> Void) rethrows -> (p50: Double, p99: Double) {
        for _ in 0..<10 { try body() }
        let clock = ContinuousClock()
        var samples: [Double] = []
        samples.reserveCapacity(rounds)
        for _ in 0..<rounds {
            let elapsed = try clock.measure(body)
            samples.append(Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000)
        }
        samples.sort()
        return (samples[samples.count / 2], samples[min(samples.count - 1, samples.count * 99 / 100)])
    }

    private static func emit(_ fields: [String: Any]) {
        let json = (try? JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys])) ?? Data()
        FileHandle.standardOutput.write(Data("bench-scene: ".utf8) + json + Data("\n".utf8))
    }
}
