// SPDX-License-Identifier: GPL-2.0-or-later

/// A frame's verdict with the measures it was given on, for logs and tests. The measures stop where
/// the verdict was decided: a dark frame has no sharpness, a blurry one no hash.
public struct FrameCheck: Sendable, Equatable {
    public let verdict: FrameVerdict
    /// Mean luminance, 0...1 (nil: the JPEG did not decode).
    public let luminance: Double?
    /// Laplacian variance (nil: not measured).
    public let sharpness: Double?
    public let hash: DHash?
    /// Bits from the last frame sent (nil: not measured, or none sent yet).
    public let distance: Int?
    /// Why the JPEG did not decode (the `error` verdict only).
    public let error: JPEGError?
    /// For a `sent` frame, the hash it replaced as the last one sent: what FrameFilter.forget puts back.
    let replaced: DHash?

    init(
        _ verdict: FrameVerdict, luminance: Double? = nil, sharpness: Double? = nil, hash: DHash? = nil,
        distance: Int? = nil, error: JPEGError? = nil, replaced: DHash? = nil
    ) {
        self.verdict = verdict
        self.luminance = luminance
        self.sharpness = sharpness
        self.hash = hash
        self.distance = distance
        self.error = error
        self.replaced = replaced
    }
}
