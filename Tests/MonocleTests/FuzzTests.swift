// SPDX-License-Identifier: GPL-2.0-or-later
import Concurrency
import Monocle
import Testing

/// Random and mutated input must never crash the parsers: a deterministic generator, so a
/// failure repeats.
@Suite("No crash on any input", .timeLimit(.minutes(10)))
struct FuzzTests {
    private func mutate(_ bytes: [UInt8], _ rng: inout SplitMix64) -> [UInt8] {
        var out = bytes
        for _ in 0..<Int.random(in: 1...4, using: &rng) {
            switch Int.random(in: 0..<4, using: &rng) {
            case 0 where !out.isEmpty: out[Int.random(in: 0..<out.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
            case 1 where !out.isEmpty: out.remove(at: Int.random(in: 0..<out.count, using: &rng))
            case 2: out.insert(UInt8.random(in: 0...255, using: &rng), at: Int.random(in: 0...out.count, using: &rng))
            default: out += (0..<Int.random(in: 0...8, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            }
        }
        return out
    }

    @Test("10,000 random and mutated data-channel frames")
    func dataFrames() {
        var rng = SplitMix64(seed: 1)
        var decoded = 0
        for i in 0..<10_000 {
            let frame: [UInt8]
            if i % 2 == 0 {
                frame = (0..<Int.random(in: 0...260, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            } else {
                let base = DataMessageTests.all[Int.random(in: 0..<DataMessageTests.all.count, using: &rng)].encoded
                frame = mutate(base, &rng)
            }
            if (try? DataMessage.decode(frame)) != nil { decoded += 1 }
        }
        // Mutations keep some frames valid; the point is that none crashed.
        #expect(decoded > 0 && decoded < 10_000)
    }

    @Test("10,000 random and mutated REPL replies")
    func replReplies() {
        var rng = SplitMix64(seed: 2)
        let seeds = [
            Array("OKv23.248.0754\r\n\u{04}\u{04}>".utf8), ReplBuffer.banner,
            Array("OK\u{04}Traceback (most recent call last):\r\nNameError: x\r\n\u{04}>".utf8),
            Array("OK\r\nMPY: soft reboot\r\n".utf8),
        ]
        var buffer = ReplBuffer(limit: 4096)
        var results = 0
        for i in 0..<10_000 {
            let piece =
                i % 3 == 0
                ? (0..<Int.random(in: 0...64, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
                : mutate(seeds[Int.random(in: 0..<seeds.count, using: &rng)], &rng)
            buffer.append(piece)
            _ = buffer.takeBanner()
            if let result = buffer.takeResult() {
                results += 1
                _ = result.exception
                _ = try? DeviceCommands.parseCheck(result.stdout)
            }
            _ = buffer.take(through: "soft reboot")
        }
        #expect(results > 0)
        #expect(buffer.bytes.count <= 4096)
    }
}
