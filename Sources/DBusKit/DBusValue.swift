// SPDX-License-Identifier: GPL-2.0-or-later

/// One D-Bus value with its type. Containers carry their element signatures so an empty array
/// still marshals with the right type.
///
/// An `ay` is carried as `.byteArray`: one `[UInt8]`, read and written in one copy. An
/// `.array(element: "y", …)` of `.byte`s still marshals and compares equal to the same bytes as
/// `.byteArray` (an empty one included), but the reader only ever produces `.byteArray`.
public enum DBusValue: Sendable, Equatable {
    case byte(UInt8)
    case bool(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(String)
    case signature(String)
    /// A file descriptor owned by this value's holder (dup'ed when read from a message). In a
    /// method handler's result it is handed over: DBusKit closes it once the reply is built.
    case unixFD(Int32)
    /// An `ay`.
    case byteArray([UInt8])
    case array(element: String, [DBusValue])
    case dict(key: String, value: String, [DictEntry])
    case structure([DBusValue])
    /// Only this case holds a value inline, so only it is boxed: a byte array stays one array.
    indirect case variant(DBusValue)

    public struct DictEntry: Sendable, Equatable {
        public var key: DBusValue
        public var value: DBusValue
        public init(_ key: DBusValue, _ value: DBusValue) {
            self.key = key
            self.value = value
        }
    }

    /// The D-Bus type signature of this value.
    public var signature: String {
        switch self {
        case .byte: "y"
        case .bool: "b"
        case .int16: "n"
        case .uint16: "q"
        case .int32: "i"
        case .uint32: "u"
        case .int64: "x"
        case .uint64: "t"
        case .double: "d"
        case .string: "s"
        case .objectPath: "o"
        case .signature: "g"
        case .unixFD: "h"
        case .byteArray: "ay"
        case .array(let element, _): "a" + element
        case .dict(let key, let value, _): "a{" + key + value + "}"
        case .structure(let fields): "(" + fields.map(\.signature).joined() + ")"
        case .variant: "v"
        }
    }
}

extension DBusValue {
    public var string: String? {
        switch self {
        case .string(let s), .objectPath(let s), .signature(let s): s
        case .variant(let inner): inner.string
        default: nil
        }
    }

    public var uint32: UInt32? {
        if case .uint32(let v) = self { return v }
        if case .variant(let inner) = self { return inner.uint32 }
        return nil
    }

    public var int64: Int64? {
        switch self {
        case .int64(let v): v
        case .int32(let v): Int64(v)
        case .int16(let v): Int64(v)
        case .uint32(let v): Int64(v)
        case .uint16(let v): Int64(v)
        case .byte(let v): Int64(v)
        case .variant(let inner): inner.int64
        default: nil
        }
    }

    public var bool: Bool? {
        if case .bool(let v) = self { return v }
        if case .variant(let inner) = self { return inner.bool }
        return nil
    }

    /// The elements of an array (an `ay` gives `.byte`s), or the fields of a struct.
    public var elements: [DBusValue]? {
        switch self {
        case .array(_, let items), .structure(let items): items
        case .byteArray(let bytes): bytes.map(DBusValue.byte)
        case .variant(let inner): inner.elements
        default: nil
        }
    }

    /// Dictionary entries keyed by string (a{sv}, a{sa{sv}} and the like).
    public var stringKeyed: [String: DBusValue]? {
        guard case .dict(_, _, let entries) = self else {
            if case .variant(let inner) = self { return inner.stringKeyed }
            return nil
        }
        var out: [String: DBusValue] = [:]
        for entry in entries {
            if let key = entry.key.string { out[key] = entry.value }
        }
        return out
    }

    /// The value inside any variants.
    public var unwrapped: DBusValue {
        if case .variant(let inner) = self { return inner.unwrapped }
        return self
    }

    /// The bytes of an `ay`, also inside variants.
    public var bytes: [UInt8]? {
        if case .variant(let inner) = self { return inner.bytes }
        return byteArrayContents
    }

    /// An `ay`.
    public static func bytes(_ bytes: [UInt8]) -> DBusValue {
        .byteArray(bytes)
    }

    /// The bytes of this value if it is an `ay` in either spelling (not looking into variants);
    /// nil for anything else, including an `.array(element: "y", …)` holding something not a byte.
    var byteArrayContents: [UInt8]? {
        switch self {
        case .byteArray(let bytes): return bytes
        case .array("y", let items):
            var bytes: [UInt8] = []
            bytes.reserveCapacity(items.count)
            for item in items {
                guard case .byte(let b) = item else { return nil }
                bytes.append(b)
            }
            return bytes
        default: return nil
        }
    }

    /// Builds an `a{sv}` dictionary.
    public static func vardict(_ entries: [String: DBusValue]) -> DBusValue {
        .dict(key: "s", value: "v", entries.sorted { $0.key < $1.key }.map { DictEntry(.string($0.key), .variant($0.value)) })
    }
}

extension DBusValue {
    /// Values are equal when they have the same type and contents; the two spellings of an `ay`
    /// (`.byteArray` and `.array(element: "y", …)` of `.byte`s) are the same type.
    public static func == (lhs: DBusValue, rhs: DBusValue) -> Bool {
        switch (lhs, rhs) {
        case (.byte(let a), .byte(let b)): a == b
        case (.bool(let a), .bool(let b)): a == b
        case (.int16(let a), .int16(let b)): a == b
        case (.uint16(let a), .uint16(let b)): a == b
        case (.int32(let a), .int32(let b)): a == b
        case (.uint32(let a), .uint32(let b)): a == b
        case (.int64(let a), .int64(let b)): a == b
        case (.uint64(let a), .uint64(let b)): a == b
        case (.double(let a), .double(let b)): a == b
        case (.string(let a), .string(let b)): a == b
        case (.objectPath(let a), .objectPath(let b)): a == b
        case (.signature(let a), .signature(let b)): a == b
        case (.unixFD(let a), .unixFD(let b)): a == b
        case (.byteArray(let a), .byteArray(let b)): a == b
        case (.byteArray(let a), .array("y", _)): a == rhs.byteArrayContents
        case (.array("y", _), .byteArray(let b)): lhs.byteArrayContents == b
        case (.array(let e1, let a), .array(let e2, let b)): e1 == e2 && a == b
        case (.dict(let k1, let v1, let a), .dict(let k2, let v2, let b)): k1 == k2 && v1 == v2 && a == b
        case (.structure(let a), .structure(let b)): a == b
        case (.variant(let a), .variant(let b)): a == b
        default: false
        }
    }
}

extension DBusValue {
    /// Every descriptor in this value, nested ones included.
    var descriptors: [Int32] {
        switch self {
        case .unixFD(let fd): [fd]
        case .array(_, let values), .structure(let values): values.flatMap(\.descriptors)
        case .dict(_, _, let entries): entries.flatMap { $0.key.descriptors + $0.value.descriptors }
        case .variant(let inner): inner.descriptors
        default: []
        }
    }
}
