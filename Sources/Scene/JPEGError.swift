// SPDX-License-Identifier: GPL-2.0-or-later

/// Why a frame did not decode. The message is libjpeg-turbo's own.
public enum JPEGError: Error, Sendable, Equatable {
    /// tjInitDecompress failed (out of memory).
    case decoderInit(String)
    /// Not a JPEG, or its header is unreadable (empty, truncated before the frame header).
    case unreadable(String)
    /// Bigger than the decoder takes, or no scaling brings it within its size.
    case tooLarge(width: Int, height: Int)
    /// The header read, the image did not: corrupt or truncated data (in strict mode, libjpeg's
    /// warnings too, as a truncated frame otherwise decodes with its missing part in gray).
    case corrupt(String)
}
