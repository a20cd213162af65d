// SPDX-License-Identifier: GPL-2.0-or-later
import Crypto

/// Init packets in nrfutil's shape (dfu-cc.proto), built field by field for the package tests.
public enum InitPackets {
    public static func varint(_ value: Int) -> [UInt8] {
        var v = value
        var out: [UInt8] = []
        while v >= 0x80 {
            out.append(UInt8(v & 0x7F) | 0x80)
            v >>= 7
        }
        return out + [UInt8(v)]
    }

    public static func field(_ number: Int, _ value: Int) -> [UInt8] { varint(number << 3) + varint(value) }
    public static func field(_ number: Int, _ bytes: [UInt8]) -> [UInt8] { varint(number << 3 | 2) + varint(bytes.count) + bytes }

    /// Packet{signed_command{command{INIT, init{fw 1, hw 52, APPLICATION, app_size, hash SHA-256
    /// (byte-reversed, as nrfutil stores it)}}, ECDSA, a 64-byte signature}} for `image`.
    public static func signed(for image: [UInt8], appSize: Int? = nil, hash: [UInt8]? = nil) -> [UInt8] {
        let digest = hash ?? Array(SHA256.hash(data: image)).reversed()
        let initCommand =
            field(1, 1) + field(2, 52) + field(4, 1) + field(7, appSize ?? image.count) + field(8, field(1, 3) + field(2, digest))
        let command = field(1, 1) + field(2, initCommand)
        return field(2, field(1, command) + field(2, 0) + field(3, [UInt8](repeating: 0x5A, count: 64)))
    }

    /// Packet{command{INIT, init{app_size}}}: unsigned, no hash.
    public static func plain(appSize: Int) -> [UInt8] {
        field(1, field(1, 1) + field(2, field(2, 52) + field(7, appSize)))
    }
}
