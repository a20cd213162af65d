// SPDX-License-Identifier: GPL-2.0-or-later
import CSystemd
import Glibc

/// Reads a whole sd-bus message body into `DBusValue`s. Only used on the bus thread.
enum MessageReader {
    static func readAll(_ m: OpaquePointer) throws(BusError) -> [DBusValue] {
        var out: [DBusValue] = []
        while let value = try readNext(m) { out.append(value) }
        return out
    }

    /// The next value at the current level, or nil at its end.
    static func readNext(_ m: OpaquePointer) throws(BusError) -> DBusValue? {
        var code: CChar = 0
        var contentsPtr: UnsafePointer<CChar>? = nil
        let r = sd_bus_message_peek_type(m, &code, &contentsPtr)
        if r < 0 { throw BusError.system(r, "peek type") }
        if r == 0 { return nil }
        let contents = contentsPtr.map { String(cString: $0) } ?? ""
        switch UInt8(bitPattern: code) {
        case UInt8(ascii: "a"): return try readArray(m, contents)
        case UInt8(ascii: "r"):
            return .structure(try inContainer(m, "r", contents) { () throws(BusError) in try readAll(m) })
        case UInt8(ascii: "v"):
            let inner = try inContainer(m, "v", contents) { () throws(BusError) in try readNext(m) }
            guard let inner else { throw BusError.invalidArgs("empty variant") }
            return .variant(inner)
        default: return try readBasic(m, code)
        }
    }

    private static func readArray(_ m: OpaquePointer, _ element: String) throws(BusError) -> DBusValue {
        if element == "y" {
            var ptr: UnsafeRawPointer? = nil
            var size = 0
            let r = sd_bus_message_read_array(m, type("y"), &ptr, &size)
            if r < 0 { throw BusError.system(r, "read ay") }
            // One copy, out of the message's own buffer.
            return .byteArray(ptr.map { Array(UnsafeRawBufferPointer(start: $0, count: size)) } ?? [])
        }
        if element.hasPrefix("{") {
            let inner = String(element.dropFirst().dropLast())
            let (keySig, valueSig) = splitFirstType(inner)
            let entries = try inContainer(m, "a", element) { () throws(BusError) -> [DBusValue.DictEntry] in
                var entries: [DBusValue.DictEntry] = []
                while true {
                    let entry = try inContainerIfAny(m, "e", inner) { () throws(BusError) -> DBusValue.DictEntry in
                        guard let k = try readNext(m), let v = try readNext(m) else {
                            throw BusError.invalidArgs("short dict entry")
                        }
                        return DBusValue.DictEntry(k, v)
                    }
                    guard let entry else { break }
                    entries.append(entry)
                }
                return entries
            }
            return .dict(key: keySig, value: valueSig, entries)
        }
        let items = try inContainer(m, "a", element) { () throws(BusError) in try readAll(m) }
        return .array(element: element, items)
    }

    private static func readBasic(_ m: OpaquePointer, _ code: CChar) throws(BusError) -> DBusValue {
        func read<T>(_ initial: T) throws(BusError) -> T {
            var v = initial
            let r = withUnsafeMutableBytes(of: &v) { sd_bus_message_read_basic(m, code, $0.baseAddress) }
            if r < 0 { throw BusError.system(r, "read basic") }
            return v
        }
        switch UInt8(bitPattern: code) {
        case UInt8(ascii: "y"): return .byte(try read(UInt8(0)))
        case UInt8(ascii: "b"): return .bool(try read(Int32(0)) != 0)
        case UInt8(ascii: "n"): return .int16(try read(Int16(0)))
        case UInt8(ascii: "q"): return .uint16(try read(UInt16(0)))
        case UInt8(ascii: "i"): return .int32(try read(Int32(0)))
        case UInt8(ascii: "u"): return .uint32(try read(UInt32(0)))
        case UInt8(ascii: "x"): return .int64(try read(Int64(0)))
        case UInt8(ascii: "t"): return .uint64(try read(UInt64(0)))
        case UInt8(ascii: "d"): return .double(try read(Double(0)))
        case UInt8(ascii: "h"):
            // The message owns its fd; the value gets its own copy.
            let fd = try read(Int32(-1))
            return .unixFD(fcntl(fd, F_DUPFD_CLOEXEC, 3))
        case UInt8(ascii: "s"), UInt8(ascii: "o"), UInt8(ascii: "g"):
            let p = try read(UnsafePointer<CChar>?.none)
            let s = p.map { String(cString: $0) } ?? ""
            switch UInt8(bitPattern: code) {
            case UInt8(ascii: "o"): return .objectPath(s)
            case UInt8(ascii: "g"): return .signature(s)
            default: return .string(s)
            }
        default:
            throw BusError.invalidArgs("unsupported D-Bus type code \(UInt8(bitPattern: code))")
        }
    }

    private static func inContainer<T>(
        _ m: OpaquePointer, _ kind: Character, _ contents: String, _ body: () throws(BusError) -> T
    ) throws(BusError) -> T {
        guard let value = try inContainerIfAny(m, kind, contents, body) else {
            throw BusError.invalidArgs("expected container \(kind)\(contents)")
        }
        return value
    }

    private static func inContainerIfAny<T>(
        _ m: OpaquePointer, _ kind: Character, _ contents: String, _ body: () throws(BusError) -> T
    ) throws(BusError) -> T? {
        var r = contents.withCString { sd_bus_message_enter_container(m, type(kind), $0) }
        if r < 0 { throw BusError.system(r, "enter container \(kind)\(contents)") }
        if r == 0 { return nil }
        let value = try body()
        r = sd_bus_message_exit_container(m)
        if r < 0 { throw BusError.system(r, "exit container \(kind)\(contents)") }
        return value
    }

    /// Splits "sa{sv}" into ("s", "a{sv}"): the first complete type and the rest.
    static func splitFirstType(_ sig: String) -> (String, String) {
        let chars = Array(sig)
        var i = 0
        func skip() {
            guard i < chars.count else { return }
            let c = chars[i]
            i += 1
            switch c {
            case "a": skip()
            case "(", "{":
                let close: Character = c == "(" ? ")" : "}"
                while i < chars.count && chars[i] != close { skip() }
                i += 1
            default: break
            }
        }
        skip()
        return (String(chars[..<i]), String(chars[i...]))
    }
}
