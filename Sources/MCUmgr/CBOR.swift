// SPDX-License-Identifier: GPL-2.0-or-later

/// One CBOR data item (RFC 8949), as much of CBOR as SMP uses, and a little more so that an
/// unexpected field in an answer is skipped rather than fatal: floats are decoded (never sent by
/// glassd), a tag is decoded as the item it wraps (its number dropped: SMP gives tags no meaning).
public enum CBOR: Sendable, Hashable {
    case unsigned(UInt64)
    /// The integer −1 − n: CBOR's negative integers reach −2⁶⁴, past Int64.
    case negative(UInt64)
    case bytes([UInt8])
    case text(String)
    case array([CBOR])
    /// Pairs in wire order: keys of any type, duplicates kept (lookups take the first).
    case map([Pair])
    case bool(Bool)
    case null
    case undefined
    /// Half, single or double precision on the wire; encoded back as a double.
    case float(Double)

    public struct Pair: Sendable, Hashable {
        public var key: CBOR
        public var value: CBOR
        public init(_ key: CBOR, _ value: CBOR) {
            self.key = key
            self.value = value
        }
    }

    /// A map with text keys, in the order given (SMP's maps all have text keys).
    public static func map(_ pairs: KeyValuePairs<String, CBOR>) -> CBOR {
        .map(pairs.map { Pair(.text($0.key), $0.value) })
    }

    /// An integer of either sign.
    public static func int(_ value: Int) -> CBOR {
        value >= 0 ? .unsigned(UInt64(value)) : .negative(UInt64(-1 - value))
    }

    // MARK: Reading a decoded answer

    /// The value under the text key `key` of a map; nil for another item or a missing key.
    public subscript(key: String) -> CBOR? {
        guard case .map(let pairs) = self else { return nil }
        return pairs.first { $0.key == .text(key) }?.value
    }

    /// The integer, if it is one that fits an Int.
    public var intValue: Int? {
        switch self {
        case .unsigned(let n): n <= UInt64(Int.max) ? Int(n) : nil
        case .negative(let n): n <= UInt64(Int.max) ? -1 - Int(n) : nil
        default: nil
        }
    }

    public var boolValue: Bool? {
        if case .bool(let b) = self { b } else { nil }
    }

    public var textValue: String? {
        if case .text(let s) = self { s } else { nil }
    }

    public var bytesValue: [UInt8]? {
        if case .bytes(let b) = self { b } else { nil }
    }

    public var arrayValue: [CBOR]? {
        if case .array(let a) = self { a } else { nil }
    }
}

/// Why bytes are not one well-formed CBOR item of the supported kinds. `at` is a byte offset.
public enum CBORError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The input ends inside an item.
    case truncated(at: Int)
    /// A string's length, or an array's or map's count, that the bytes left cannot hold: refused
    /// before anything is allocated for it.
    case lengthPastEnd(at: Int, declared: UInt64, remaining: Int)
    /// Arrays, maps and tags nested deeper than the decoder's limit.
    case tooDeep(limit: Int)
    case invalidUTF8(at: Int)
    /// Additional information 28–30 (reserved), or 31 (indefinite) where CBOR forbids it.
    case malformedHead(at: Int)
    /// An indefinite-length string with a chunk that is not a definite string of its own type.
    case badChunk(at: Int)
    /// A break byte (0xff) outside an indefinite-length item.
    case unexpectedBreak(at: Int)
    /// A simple value other than false, true, null and undefined.
    case unsupportedSimple(at: Int, value: UInt8)
    /// Bytes left after the one item.
    case trailingBytes(at: Int)

    public var description: String {
        switch self {
        case .truncated(let at): "CBOR ends inside an item (byte \(at))"
        case .lengthPastEnd(let at, let declared, let remaining):
            "CBOR length \(declared) at byte \(at) exceeds the \(remaining) bytes left"
        case .tooDeep(let limit): "CBOR nested deeper than \(limit) levels"
        case .invalidUTF8(let at): "CBOR text at byte \(at) is not UTF-8"
        case .malformedHead(let at): "malformed CBOR item head at byte \(at)"
        case .badChunk(let at): "bad chunk in an indefinite-length CBOR string at byte \(at)"
        case .unexpectedBreak(let at): "CBOR break outside an indefinite-length item at byte \(at)"
        case .unsupportedSimple(let at, let value): "unsupported CBOR simple value \(value) at byte \(at)"
        case .trailingBytes(let at): "bytes after the CBOR item, from byte \(at)"
        }
    }
}
