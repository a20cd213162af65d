// SPDX-License-Identifier: GPL-2.0-or-later
import Concurrency
import Foundation
import Scene
import Testing

@Suite("JPEG decoder", .timeLimit(.minutes(5)))
struct JPEGDecoderTests {
    @Test("scaled down to fit the bounds, never up", arguments: [
        (640, 640, 640, 400), (1000, 1000, 640, 400), (639, 640, 560, 350), (320, 400, 320, 200),
        (640, 399, 560, 350), (100, 100, 80, 50), (80, 50, 80, 50),
    ])
    func scaled(bounds: (Int, Int, Int, Int)) throws {
        let (maxWidth, maxHeight, width, height) = bounds
        let image = try JPEGDecoder(maxWidth: maxWidth, maxHeight: maxHeight).decode(try Fixture.sharp.bytes())
        #expect(image.width == width && image.height == height)
    }

    @Test("too large: nothing fits the bounds, or the header claims more than a frame can be")
    func tooLarge() throws {
        #expect(throws: JPEGError.tooLarge(width: 640, height: 400)) {
            try JPEGDecoder(maxWidth: 79).decode(try Fixture.sharp.bytes())
        }
        // SOF0's height and width patched to 5000: refused before anything is allocated.
        var jpeg = try Fixture.sharp.bytes()
        let sof = try #require(jpeg.indices.dropLast().first { jpeg[$0] == 0xFF && jpeg[$0 + 1] == 0xC0 })
        jpeg.replaceSubrange((sof + 5)..<(sof + 9), with: [0x13, 0x88, 0x13, 0x88])
        #expect(throws: JPEGError.tooLarge(width: 5000, height: 5000)) { try JPEGDecoder().decode(jpeg) }
    }

    @Test("not a JPEG: unreadable")
    func unreadable() throws {
        let decoder = try JPEGDecoder()
        for bytes in [[], Array("GIF89a".utf8), [0xFF, 0xD8], [0xFF, 0xD8, 0xFF, 0xD9]] as [[UInt8]] {
            #expect {
                try decoder.decode(bytes)
            } throws: { error in
                guard case JPEGError.unreadable = error else { return false }
                return true
            }
        }
    }

    @Test("a truncated frame: corrupt when strict, its missing part gray otherwise")
    func truncated() throws {
        let jpeg = Array(try Fixture.sharp.bytes().prefix(20_000))
        #expect {
            try JPEGDecoder().decode(jpeg)
        } throws: { error in
            guard case JPEGError.corrupt = error else { return false }
            return true
        }
        let image = try JPEGDecoder(strict: false).decode(jpeg)
        #expect(image.width == 640 && image.height == 400)
        // libjpeg fills what it never received with mid-gray (128).
        #expect(image.pixels.suffix(640 * 10).allSatisfy { $0 == 128 })
    }

    /// Truncations and bit flips of a real frame, then garbage: every one decodes to an image within
    /// the bounds or throws a JPEGError (a crash ends the test run), and the filter takes such an image.
    /// Seconds of work: it yields between attempts, or it would hold one of the pool's two threads.
    @Test("never crashes: truncations, bit flips, garbage")
    func fuzz() async throws {
        let original = try Fixture.sharp.bytes()
        let strict = try JPEGDecoder(), lenient = try JPEGDecoder(maxWidth: 320, maxHeight: 320, strict: false)
        var random = SplitMix64(seed: 2025)
        var outcomes = (images: 0, errors: 0)
        func attempt(_ bytes: [UInt8]) {
            for decoder in [strict, lenient] {
                do {
                    let image = try decoder.decode(bytes)
                    #expect(image.width <= decoder.maxWidth && image.height <= decoder.maxHeight)
                    // The measures on some of them (all would take long in a debug build).
                    if outcomes.images % 16 == 0 {
                        var filter = FrameFilter(thresholds: FrameThresholds(darkThreshold: 0, blurThreshold: 0))
                        #expect(filter.check(image).hash != nil)
                    }
                    outcomes.images += 1
                } catch {
                    outcomes.errors += 1
                }
            }
        }
        let long = ProcessInfo.processInfo.environment["GLASSD_FUZZ_LONG"] != nil
        // Every cut through the headers, then cuts through the scan.
        for length in Array(0..<700) + Array(stride(from: 700, to: original.count, by: long ? 7 : 61)) {
            attempt(Array(original.prefix(length)))
            await Task.yield()
        }
        for _ in 0..<(long ? 20_000 : 1_500) {
            var bytes = original
            // Mostly in the headers (the first 700 bytes), where a flip changes the most.
            for _ in 0...random.next(below: 3) {
                let index = random.next(below: 2) == 0 ? random.next(below: 700) : random.next(below: bytes.count)
                bytes[index] ^= 1 << UInt8(random.next(below: 8))
            }
            attempt(bytes)
            await Task.yield()
        }
        for _ in 0..<(long ? 2_000 : 200) {
            let header = Array(original.prefix(random.next(below: 700)))
            attempt(header + (0..<random.next(below: 4_000)).map { _ in UInt8(truncatingIfNeeded: random.next()) })
            await Task.yield()
        }
        #expect(outcomes.images > 0 && outcomes.errors > 0)
    }
}

extension SplitMix64 {
    mutating func next(below bound: Int) -> Int { Int(next() % UInt64(bound)) }
}
