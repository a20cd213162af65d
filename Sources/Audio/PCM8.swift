// SPDX-License-Identifier: GPL-2.0-or-later

/// The Monocle's microphone format: signed 8-bit (two's complement), each byte a sample's high byte.
public enum PCM8 {
    public static func sample(_ byte: UInt8) -> Int16 {
        Int16(bitPattern: UInt16(byte) << 8)
    }

    public static func widen(_ bytes: some Collection<UInt8>) -> [Int16] {
        bytes.map(sample)
    }
}
