// SPDX-License-Identifier: GPL-2.0-or-later
import CZlibCRC

/// The standard CRC-32 (zlib's), as the DFU bootloader reports it: kept running over every byte
/// of an object stream, so a checksum answer can be compared without keeping the bytes.
public struct ZlibCRC32: Sendable, Equatable {
    public private(set) var value: UInt32 = 0

    public init() {}

    public init(_ bytes: ArraySlice<UInt8>) {
        update(bytes)
    }

    public init(_ bytes: [UInt8]) {
        update(bytes[...])
    }

    public mutating func update(_ bytes: ArraySlice<UInt8>) {
        guard !bytes.isEmpty else { return }
        value = bytes.withUnsafeBufferPointer { buffer in
            // zlib takes a 32-bit length: feed a huge buffer in pieces.
            var crc = UInt(value)
            var start = 0
            while start < buffer.count {
                let count = min(buffer.count - start, Int(UInt32.max))
                crc = crc32(crc, buffer.baseAddress! + start, UInt32(count))
                start += count
            }
            return UInt32(truncatingIfNeeded: crc)
        }
    }

    public static func checksum(_ bytes: ArraySlice<UInt8>) -> UInt32 { ZlibCRC32(bytes).value }
    public static func checksum(_ bytes: [UInt8]) -> UInt32 { ZlibCRC32(bytes).value }
}
