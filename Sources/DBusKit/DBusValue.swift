// SPDX-License-Identifier: GPL-2.0-or-later

/// One D-Bus value with its type. Containers carry their element signatures so an empty array
/// still marshals with the right type.
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
    /// A file descriptor owned by this value's holder (dup'ed when read from a message).
    case unixFD(Int32)
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

    /// The elements of an array, or the fields of a struct.
    public var elements: [DBusValue]? {
        switch self {
        case .array(_, let items), .structure(let items): items
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

    /// The bytes of an `ay`.
    public var bytes: [UInt8]? {
        switch self {
        case .array("y", let items):
            items.map { item -> UInt8 in
                if case .byte(let b) = item { return b }
                return 0
            }
        case .variant(let inner): inner.bytes
        default: nil
        }
    }

    /// An `ay`.
    public static func bytes(_ bytes: [UInt8]) -> DBusValue {
        .array(element: "y", bytes.map(DBusValue.byte))
    }

    /// Builds an `a{sv}` dictionary.
    public static func vardict(_ entries: [String: DBusValue]) -> DBusValue {
        .dict(key: "s", value: "v", entries.sorted { $0.key < $1.key }.map { DictEntry(.string($0.key), .variant($0.value)) })
    }
}
