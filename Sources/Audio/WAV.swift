// SPDX-License-Identifier: GPL-2.0-or-later

/// A canonical 44-byte-header RIFF/WAVE file: PCM (format 1), mono, 16-bit, little-endian.
public enum WAV {
    public static func encode(_ samples: [Int16], sampleRate: Int) -> [UInt8] {
        // Clamped, not trapping: a file over 4 GiB cannot be described anyway, and is never made here.
        let dataSize = UInt32(clamping: samples.count &* 2)
        let rate = UInt32(clamping: sampleRate)
        var out: [UInt8] = []
        out.reserveCapacity(44 + samples.count * 2)
        out += Array("RIFF".utf8)
        out += le32(dataSize &+ 36)
        out += Array("WAVEfmt ".utf8)
        out += le32(16)  // fmt chunk size
        out += le16(1)  // PCM
        out += le16(1)  // channels
        out += le32(rate)
        out += le32(rate &* 2)  // byte rate: rate × channels × 2 bytes
        out += le16(2)  // block align
        out += le16(16)  // bits per sample
        out += Array("data".utf8)
        out += le32(dataSize)
        for s in samples {
            let u = UInt16(bitPattern: s)
            out.append(UInt8(truncatingIfNeeded: u))
            out.append(UInt8(truncatingIfNeeded: u >> 8))
        }
        return out
    }

    private static func le16(_ v: UInt16) -> [UInt8] {
        [UInt8(truncatingIfNeeded: v), UInt8(truncatingIfNeeded: v >> 8)]
    }
    private static func le32(_ v: UInt32) -> [UInt8] {
        [0, 8, 16, 24].map { UInt8(truncatingIfNeeded: v >> $0) }
    }
}
