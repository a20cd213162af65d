// SPDX-License-Identifier: GPL-2.0-or-later
import Scene
import Testing

/// The measures on the fixtures, decoded as glassd decodes a camera frame: the default thresholds
/// fall well between each pair the filter has to tell apart.
@Suite("Frame measures on the fixture JPEGs", .timeLimit(.minutes(10)))
struct FixtureTests {
    let decoder: JPEGDecoder

    init() throws { decoder = try JPEGDecoder() }

    private func image(_ fixture: Fixture) throws -> GrayImage { try decoder.decode(try fixture.bytes()) }

    @Test("decoded at full size, 640x400", arguments: Fixture.allCases)
    func size(_ fixture: Fixture) throws {
        let image = try image(fixture)
        #expect(image.width == 640 && image.height == 400)
    }

    @Test("dark: the dark frame under 0.15, the others well over it")
    func dark() throws {
        let sharp = try image(.sharp).meanLuminance(), dark = try image(.dark).meanLuminance()
        #expect((0.50...0.60).contains(sharp))  // 0.554
        #expect((0.03...0.06).contains(dark))  // 0.044: 8 % of the scene
        #expect(abs(dark / sharp - 0.08) < 0.005)
        #expect(dark < FrameThresholds().darkThreshold)
        for fixture in Fixture.allCases where fixture != .dark {
            #expect(try image(fixture).meanLuminance() > 3 * FrameThresholds().darkThreshold, "\(fixture)")
        }
    }

    @Test("blurry: the sharp scenes over 1000, the blurred one under 10")
    func blurry() throws {
        let threshold = FrameThresholds().blurThreshold
        for fixture in [Fixture.sharp, .reencoded, .moved, .other] {
            let variance = try image(fixture).laplacianVariance()  // 3,530 sharp; 4,153 other
            #expect(variance > 10 * threshold, "\(fixture): \(variance)")
        }
        let blurred = try image(.blurred).laplacianVariance()  // 2.3
        #expect(blurred < threshold / 10)
        // Dark frames measure low too (22 here): the order dark, then blurry, names them right.
        #expect(try image(.dark).laplacianVariance() < threshold)
    }

    @Test("unchanged: the same view within 10 bits, the other scene beyond")
    func unchanged() throws {
        let bits = FrameThresholds().changeBits
        let sharp = try image(.sharp).dHash()
        #expect(try image(.reencoded).dHash().distance(to: sharp) <= 2)  // 0
        // A small move of the head shifts the cells' edges: 7 bits, still the same view.
        let moved = try image(.moved).dHash().distance(to: sharp)
        #expect((3...bits).contains(moved))
        // Blur and darkness keep the coarse layout dHash sees.
        #expect(try image(.blurred).dHash().distance(to: sharp) <= 2)
        #expect(try image(.dark).dHash().distance(to: sharp) <= 2)
        let other = try image(.other).dHash()
        for fixture in Fixture.allCases where fixture != .other {
            #expect(try image(fixture).dHash().distance(to: other) >= 2 * bits, "\(fixture)")  // 26
        }
    }

    @Test("the filter through a walk: each fixture gets its verdict")
    func walk() throws {
        var filter = FrameFilter()
        let walk: [(Fixture, FrameVerdict)] = [
            (.sharp, .sent), (.reencoded, .unchanged), (.moved, .unchanged), (.blurred, .blurry), (.dark, .dark),
            (.other, .sent), (.other, .unchanged), (.moved, .sent), (.sharp, .unchanged),
        ]
        for (step, (fixture, verdict)) in walk.enumerated() {
            let check = filter.check(jpeg: try fixture.bytes(), decoder: decoder)
            #expect(check.verdict == verdict, "step \(step): \(fixture)")
        }
    }
}
