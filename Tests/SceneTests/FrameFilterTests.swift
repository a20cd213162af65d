// SPDX-License-Identifier: GPL-2.0-or-later
import Scene
import Testing

/// Bright and sharp (a checkerboard over a ramp), its dHash all ones when rising, all zeros falling.
private func sharp(rising: Bool) -> GrayImage {
    GrayImage(width: 64, height: 40) { x, y in (rising ? 60 + 2 * x : 188 - 2 * x) + (x + y) % 2 * 40 }
}

private func flat(_ value: Int) -> GrayImage { GrayImage(width: 64, height: 40) { _, _ in value } }

@Suite("Frame filter", .timeLimit(.minutes(5)))
struct FrameFilterTests {
    let a = sharp(rising: true), b = sharp(rising: false)

    @Test("the verdicts' names, exactly as glassd reports them")
    func names() {
        #expect(FrameVerdict.allCases.map(\.rawValue) == ["sent", "dark", "blurry", "unchanged", "busy", "error"])
        #expect(FrameThresholds() == FrameThresholds(darkThreshold: 0.15, blurThreshold: 100, changeBits: 10))
    }

    @Test("the test images are what they claim")
    func images() {
        #expect(a.dHash().bits == .max && b.dHash().bits == 0)
        #expect(a.laplacianVariance() > 10_000 && flat(150).laplacianVariance() == 0)
        #expect(a.meanLuminance() > 0.4 && flat(10).meanLuminance() < 0.05)
    }

    @Test("dark comes first: a dark frame is dark, however blurry or unchanged")
    func darkFirst() {
        var filter = FrameFilter()
        #expect(filter.check(b).verdict == .sent)
        let check = filter.check(flat(10))  // blurry, and its hash (0) is b's
        #expect(check.verdict == .dark)
        #expect(check.sharpness == nil && check.hash == nil && check.luminance != nil)
        // Sharp but dark: still dark.
        let dim = GrayImage(width: 64, height: 40) { x, y in (x + y) % 2 * 20 }
        #expect(dim.laplacianVariance() > 100)
        #expect(filter.check(dim).verdict == .dark)
    }

    @Test("blurry before unchanged: a blurry copy of the last frame is blurry")
    func blurryBeforeUnchanged() {
        var filter = FrameFilter()
        #expect(filter.check(b).verdict == .sent)
        let check = filter.check(flat(150))
        #expect(flat(150).dHash().distance(to: b.dHash()) == 0)
        #expect(check.verdict == .blurry)
        #expect(check.sharpness == 0 && check.hash == nil)
    }

    @Test("only a sent frame is remembered")
    func memory() {
        var filter = FrameFilter()
        let first = filter.check(a)
        #expect(first.verdict == .sent && first.distance == nil && filter.lastSent == a.dHash())
        #expect(filter.check(a).verdict == .unchanged)
        #expect(filter.check(flat(150)).verdict == .blurry)
        #expect(filter.check(flat(5)).verdict == .dark)
        #expect(filter.check(a).verdict == .unchanged)
        let second = filter.check(b)
        #expect(second.verdict == .sent && second.distance == 64 && filter.lastSent == b.dHash())
        #expect(filter.check(b).verdict == .unchanged)
        #expect(filter.check(a).verdict == .sent)
    }

    @Test("a JPEG that does not decode is an error and changes nothing")
    func error() throws {
        var filter = FrameFilter()
        _ = filter.check(a)
        let check = filter.check(jpeg: Array("not a JPEG".utf8), decoder: try JPEGDecoder())
        #expect(check.verdict == .error && check.luminance == nil)
        guard case .unreadable = check.error else { Issue.record("\(String(describing: check.error))"); return }
        #expect(filter.lastSent == a.dHash())
    }

    @Test("forget: a sent frame that did not go out, and only that one")
    func forget() {
        var filter = FrameFilter()
        let first = filter.check(a)
        filter.forget(first)
        #expect(filter.lastSent == nil)
        #expect(filter.check(a).verdict == .sent)

        let second = filter.check(b)
        filter.forget(filter.check(b))  // unchanged: nothing to forget
        #expect(filter.lastSent == b.dHash())
        filter.forget(first)  // a later frame was sent since: too late
        #expect(filter.lastSent == b.dHash())
        filter.forget(second)  // a is the last sent again
        #expect(filter.lastSent == a.dHash())
        #expect(filter.check(a).verdict == .unchanged)
        filter.reset()
        #expect(filter.lastSent == nil && filter.check(a).verdict == .sent)
    }

    @Test("the thresholds are bounds: at a threshold a frame passes, within change_bits it is unchanged")
    func bounds() {
        let luminance = a.meanLuminance(), variance = a.laplacianVariance()
        var filter = FrameFilter(thresholds: FrameThresholds(darkThreshold: luminance, blurThreshold: variance))
        #expect(filter.check(a).verdict == .sent)
        filter.thresholds.darkThreshold = luminance.nextUp
        #expect(filter.check(a).verdict == .dark)
        filter.thresholds.darkThreshold = 0
        filter.thresholds.blurThreshold = variance.nextUp
        #expect(filter.check(a).verdict == .blurry)

        // c differs from a in its top row only: 8 bits.
        let c = GrayImage(width: 64, height: 40) { x, y in (y < 5 ? 188 - 2 * x : 60 + 2 * x) + (x + y) % 2 * 40 }
        #expect(c.dHash().distance(to: a.dHash()) == 8)
        filter = FrameFilter(thresholds: FrameThresholds(changeBits: 8))
        _ = filter.check(a)
        #expect(filter.check(c).verdict == .unchanged)
        filter.thresholds.changeBits = 7
        let check = filter.check(c)
        #expect(check.verdict == .sent && check.distance == 8)
    }
}
