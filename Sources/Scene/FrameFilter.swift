// SPDX-License-Identifier: GPL-2.0-or-later

/// Scene mode's quality filter: each captured frame is checked dark, then blurry, then unchanged
/// (against the last frame sent), and only a frame that passes all three is `sent`. Only a `sent`
/// verdict changes what the filter remembers; if the frame then does not go out after all, `forget`
/// it. A value: the daemon keeps one per scene-mode session.
public struct FrameFilter: Sendable {
    public var thresholds: FrameThresholds
    /// The dHash of the last frame sent (nil: none yet, so the next good frame is sent).
    public private(set) var lastSent: DHash?

    public init(thresholds: FrameThresholds = FrameThresholds()) {
        self.thresholds = thresholds
    }

    /// Decodes and checks a camera frame; a JPEG that does not decode gets `error`.
    public mutating func check(jpeg: [UInt8], decoder: JPEGDecoder) -> FrameCheck {
        do throws(JPEGError) {
            return check(try decoder.decode(jpeg))
        } catch {
            return FrameCheck(.error, error: error)
        }
    }

    /// Checks a decoded frame. The measures run in the verdicts' order and stop at the first that
    /// fails, so a dark frame costs one pass over the pixels.
    public mutating func check(_ image: GrayImage) -> FrameCheck {
        let luminance = image.meanLuminance()
        guard luminance >= thresholds.darkThreshold else { return FrameCheck(.dark, luminance: luminance) }
        let sharpness = image.laplacianVariance()
        guard sharpness >= thresholds.blurThreshold else {
            return FrameCheck(.blurry, luminance: luminance, sharpness: sharpness)
        }
        let hash = image.dHash()
        let distance = lastSent.map { hash.distance(to: $0) }
        if let distance, distance <= thresholds.changeBits {
            return FrameCheck(.unchanged, luminance: luminance, sharpness: sharpness, hash: hash, distance: distance)
        }
        defer { lastSent = hash }
        return FrameCheck(
            .sent, luminance: luminance, sharpness: sharpness, hash: hash, distance: distance, replaced: lastSent)
    }

    /// Undoes a `sent` check whose frame did not go out (dropped, or the send failed): the frame
    /// before it is the last sent again. Does nothing for any other check, or once a later frame was sent.
    public mutating func forget(_ check: FrameCheck) {
        guard check.verdict == .sent, let hash = check.hash, lastSent == hash else { return }
        lastSent = check.replaced
    }

    /// Forgets every frame sent: the next good frame is sent whatever it shows (a new session).
    public mutating func reset() { lastSent = nil }
}
