// SPDX-License-Identifier: GPL-2.0-or-later
import Scene
import Testing

/// The three measures on small images whose values can be worked out by hand.
@Suite("Frame measures", .timeLimit(.minutes(5)))
struct MeasureTests {
    @Test("mean luminance: the mean of the pixels over 255")
    func luminance() {
        #expect(GrayImage(width: 4, height: 3) { _, _ in 51 }.meanLuminance() == 0.2)
        #expect(GrayImage(width: 2, height: 1, pixels: [0, 255]).meanLuminance() == 0.5)
        #expect(GrayImage(width: 1, height: 1, pixels: [0]).meanLuminance() == 0)
        #expect(GrayImage(width: 640, height: 400) { _, _ in 255 }.meanLuminance() == 1)
    }

    @Test("Laplacian variance: none on a flat image or a linear or quadratic ramp")
    func smooth() {
        #expect(GrayImage(width: 8, height: 6) { _, _ in 200 }.laplacianVariance() == 0)
        #expect(GrayImage(width: 20, height: 10) { x, y in 10 * x + 3 * y }.laplacianVariance() == 0)
        // The second difference of x² is 2 everywhere: L is constant, so its variance is 0.
        #expect(GrayImage(width: 12, height: 5) { x, _ in x * x }.laplacianVariance() == 0)
    }

    @Test("Laplacian variance: a single bright pixel, worked out by hand")
    func spot() {
        // 5x5, 10 in the middle: over the 9 interior pixels L is -40 at the centre, +10 at its four
        // neighbours, 0 at the corners: ΣL = 0, ΣL² = 1600 + 4 x 100 = 2000, so 2000 / 9.
        let image = GrayImage(width: 5, height: 5) { x, y in x == 2 && y == 2 ? 10 : 0 }
        #expect(abs(image.laplacianVariance() - 2000.0 / 9) < 1e-9)
    }

    @Test("Laplacian variance: a checkerboard, the sharpest pattern")
    func checkerboard() {
        // Interior of a 4x4 board of 0 and 100: L = -400 on the 100s, +400 on the 0s, two of each.
        let image = GrayImage(width: 4, height: 4) { x, y in (x + y) % 2 == 0 ? 100 : 0 }
        #expect(image.laplacianVariance() == 160_000)
    }

    @Test("Laplacian variance: 0 without interior pixels, and from one interior pixel")
    func tiny() {
        #expect(GrayImage(width: 2, height: 9) { x, _ in x * 255 }.laplacianVariance() == 0)
        #expect(GrayImage(width: 9, height: 1) { x, _ in x * 20 }.laplacianVariance() == 0)
        #expect(GrayImage(width: 3, height: 3) { x, y in x == 1 && y == 1 ? 255 : 0 }.laplacianVariance() == 0)
    }

    @Test("dHash of gradients: all bits rising left to right, none falling or top to bottom")
    func gradients() {
        #expect(GrayImage(width: 640, height: 400) { x, _ in x * 255 / 639 }.dHash() == DHash(bits: .max))
        #expect(GrayImage(width: 640, height: 400) { x, _ in 255 - x * 255 / 639 }.dHash() == DHash(bits: 0))
        #expect(GrayImage(width: 640, height: 400) { _, y in y * 255 / 399 }.dHash() == DHash(bits: 0))
        #expect(GrayImage(width: 1, height: 1, pixels: [77]).dHash() == DHash(bits: 0))
    }

    @Test("dHash on a 9x8 image: one cell per pixel, the top-left pair in the top bit")
    func cells() {
        // Only the top row rises: its 8 bits come first.
        let top = GrayImage(width: 9, height: 8) { x, y in y == 0 ? x : 0 }
        #expect(top.dHash().bits == 0xFF00_0000_0000_0000)
        // A bright column at x = 4: brighter than x = 3, so bit 3 of each row (0b0001_0000).
        let column = GrayImage(width: 9, height: 8) { x, _ in x == 4 ? 200 : 100 }
        #expect(column.dHash().bits == 0x1010_1010_1010_1010)
        #expect(column.dHash().description == "1010101010101010")
    }

    @Test("dHash area averaging: a cell covering part of a pixel, and a pixel split between cells")
    func areas() {
        // 3 pixels wide: three cells each, so the cells step up after x = 2 and x = 5 (0b0010_0100).
        let wide = GrayImage(width: 3, height: 2) { x, _ in x * 100 }
        #expect(wide.dHash().bits == 0x2424_2424_2424_2424)
        // 10 pixels into 9 cells: the last cell is 9/10 the bright last pixel, which no other cell touches.
        let last = GrayImage(width: 10, height: 8) { x, _ in x == 9 ? 255 : 0 }
        #expect(last.dHash().bits == 0x0101_0101_0101_0101)
        // 10 pixels, pixel 5 bright: 5/9 of it falls in cell 4, 4/9 in cell 5, so cell 4 is the
        // brighter: it rises from cell 3 and cell 5 falls from it, only bit 3 (0b0001_0000).
        let split = GrayImage(width: 10, height: 8) { x, _ in x == 5 ? 255 : 0 }
        #expect(split.dHash().bits == 0x1010_1010_1010_1010)
        // Pixel 4 instead: 4/9 in cell 3, 5/9 in cell 4, so both rise: bits 2 and 3 (0b0011_0000).
        let early = GrayImage(width: 10, height: 8) { x, _ in x == 4 ? 255 : 0 }
        #expect(early.dHash().bits == 0x3030_3030_3030_3030)
    }

    @Test("Hamming distance: the bits that differ")
    func distance() {
        #expect(DHash(bits: 0).distance(to: DHash(bits: .max)) == 64)
        #expect(DHash(bits: 0b1011).distance(to: DHash(bits: 0b0110)) == 3)
        #expect(DHash(bits: 0x1234).distance(to: DHash(bits: 0x1234)) == 0)
    }
}
