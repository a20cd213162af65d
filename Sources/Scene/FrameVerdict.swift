// SPDX-License-Identifier: GPL-2.0-or-later

/// What became of a captured frame. The raw values are the names glassd reports (D-Bus, logs):
/// spelled here once.
public enum FrameVerdict: String, Sendable, CaseIterable {
    /// Passed the filter: to be sent.
    case sent
    /// Mean luminance under the dark threshold.
    case dark
    /// Laplacian variance under the blur threshold.
    case blurry
    /// Within the change threshold of the last frame sent.
    case unchanged
    /// Dropped because a frame was still on its way (glassd's own verdict; the filter never gives it).
    case busy
    /// The JPEG did not decode.
    case error
}
