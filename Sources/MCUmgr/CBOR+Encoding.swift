// SPDX-License-Identifier: GPL-2.0-or-later

extension CBOR {
    /// The item's bytes: definite lengths only, every integer and length in its shortest form
    /// (RFC 8949 §4.2.1's "preferred serialization"), map pairs in their given order. What the
    /// device's decoder (zcbor) accepts, and what the upload's chunk size is computed from.
    public var encoded: [UInt8] {
        var out: [UInt8] = []
        encode(into: &out)
        return out
    }

    public func encode(into out: inout [UInt8]) {
        switch self {
        case .unsigned(let n): Self.head(0, n, into: &out)
        case .negative(let n): Self.head(1, n, into: &out)
        case .bytes(let b):
            Self.head(2, UInt64(b.count), into: &out)
            out += b
        case .text(let s):
            Self.head(3, UInt64(s.utf8.count), into: &out)
            out += s.utf8
        case .array(let items):
            Self.head(4, UInt64(items.count), into: &out)
            for item in items { item.encode(into: &out) }
        case .map(let pairs):
            Self.head(5, UInt64(pairs.count), into: &out)
            for pair in pairs {
                pair.key.encode(into: &out)
                pair.value.encode(into: &out)
            }
        case .bool(let b): out.append(b ? 0xf5 : 0xf4)
        case .null: out.append(0xf6)
        case .undefined: out.append(0xf7)
        case .float(let d):
            out.append(0xfb)
            Self.bigEndian(d.bitPattern, bytes: 8, into: &out)
        }
    }

    /// How many bytes the head of an item with `argument` takes (the type byte included).
    public static func headSize(_ argument: UInt64) -> Int {
        switch argument {
        case 0..<24: 1
        case 24...0xff: 2
        case 0x100...0xffff: 3
        case 0x1_0000...0xffff_ffff: 5
        default: 9
        }
    }

    static func head(_ major: UInt8, _ argument: UInt64, into out: inout [UInt8]) {
        let type = major << 5
        switch headSize(argument) {
        case 1: out.append(type | UInt8(argument))
        case 2:
            out.append(type | 24)
            out.append(UInt8(argument))
        case 3:
            out.append(type | 25)
            bigEndian(argument, bytes: 2, into: &out)
        case 5:
            out.append(type | 26)
            bigEndian(argument, bytes: 4, into: &out)
        default:
            out.append(type | 27)
            bigEndian(argument, bytes: 8, into: &out)
        }
    }

    private static func bigEndian(_ value: UInt64, bytes: Int, into out: inout [UInt8]) {
        for i in stride(from: bytes - 1, through: 0, by: -1) {
            out.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(i))))
        }
    }
}
