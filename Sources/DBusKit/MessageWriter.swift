// SPDX-License-Identifier: GPL-2.0-or-later
import CSystemd

/// Appends `DBusValue`s to an sd-bus message. Only used on the bus thread.
enum MessageWriter {
    /// `s` as a C string for sd-bus, which would cut it at a NUL: D-Bus strings cannot hold one,
    /// so such a string is refused instead of sent shortened (found by Scripts/fuzz).
    private static func cString(_ s: String, _ body: (UnsafePointer<CChar>) -> Int32) throws(BusError) -> Int32 {
        guard !s.utf8.contains(0) else { throw BusError.invalidArgs("a D-Bus string cannot hold a NUL character") }
        return s.withCString(body)
    }

    static func append(_ values: [DBusValue], to m: OpaquePointer) throws(BusError) {
        for value in values { try append(value, to: m) }
    }

    static func append(_ value: DBusValue, to m: OpaquePointer) throws(BusError) {
        let r: Int32
        switch value {
        case .byte(var v): r = sd_bus_message_append_basic(m, type("y"), &v)
        case .bool(let b):
            var v: Int32 = b ? 1 : 0
            r = sd_bus_message_append_basic(m, type("b"), &v)
        case .int16(var v): r = sd_bus_message_append_basic(m, type("n"), &v)
        case .uint16(var v): r = sd_bus_message_append_basic(m, type("q"), &v)
        case .int32(var v): r = sd_bus_message_append_basic(m, type("i"), &v)
        case .uint32(var v): r = sd_bus_message_append_basic(m, type("u"), &v)
        case .int64(var v): r = sd_bus_message_append_basic(m, type("x"), &v)
        case .uint64(var v): r = sd_bus_message_append_basic(m, type("t"), &v)
        case .double(var v): r = sd_bus_message_append_basic(m, type("d"), &v)
        case .unixFD(var v): r = sd_bus_message_append_basic(m, type("h"), &v)
        case .string(let s): r = try cString(s) { sd_bus_message_append_basic(m, type("s"), $0) }
        case .objectPath(let s): r = try cString(s) { sd_bus_message_append_basic(m, type("o"), $0) }
        case .signature(let s): r = try cString(s) { sd_bus_message_append_basic(m, type("g"), $0) }
        case .byteArray(let bytes):
            // Byte arrays go in one copy: BLE payloads and the like.
            r = appendBytes(bytes, to: m)
        case .array(let element, let items):
            if element == "y" {
                guard let bytes = value.byteArrayContents else {
                    throw BusError.invalidArgs("an ay holds only bytes")
                }
                r = appendBytes(bytes, to: m)
            } else {
                try container(m, "a", element) { () throws(BusError) in
                    for item in items { try append(item, to: m) }
                }
                return
            }
        case .dict(let key, let valueSig, let entries):
            try container(m, "a", "{" + key + valueSig + "}") { () throws(BusError) in
                for entry in entries {
                    try container(m, "e", key + valueSig) { () throws(BusError) in
                        try append(entry.key, to: m)
                        try append(entry.value, to: m)
                    }
                }
            }
            return
        case .structure(let fields):
            try container(m, "r", fields.map(\.signature).joined()) { () throws(BusError) in
                try append(fields, to: m)
            }
            return
        case .variant(let inner):
            try container(m, "v", inner.signature) { () throws(BusError) in
                try append(inner, to: m)
            }
            return
        }
        if r < 0 { throw BusError.system(r, "append \(value.signature)") }
    }

    private static func appendBytes(_ bytes: [UInt8], to m: OpaquePointer) -> Int32 {
        bytes.withUnsafeBytes { sd_bus_message_append_array(m, type("y"), $0.baseAddress, $0.count) }
    }

    private static func container(
        _ m: OpaquePointer, _ kind: Character, _ contents: String, _ body: () throws(BusError) -> Void
    ) throws(BusError) {
        var r = contents.withCString { sd_bus_message_open_container(m, type(kind), $0) }
        if r < 0 { throw BusError.system(r, "open container \(kind)\(contents)") }
        try body()
        r = sd_bus_message_close_container(m)
        if r < 0 { throw BusError.system(r, "close container \(kind)\(contents)") }
    }
}

/// A D-Bus type code as the C API wants it.
@inline(__always) func type(_ c: Character) -> CChar { CChar(bitPattern: c.asciiValue ?? 0) }
