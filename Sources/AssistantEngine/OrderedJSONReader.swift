// SPDX-License-Identifier: GPL-2.0-or-later

/// The recursive-descent reader behind `OrderedJSON.parse`: strict RFC 8259, bounded depth (a
/// hostile answer must not exhaust the stack).
struct OrderedJSONReader {
    typealias ParseError = OrderedJSON.ParseError

    let bytes: [UInt8]
    let maxDepth: Int
    var at = 0

    init(bytes: [UInt8], maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    mutating func skipSpace() {
        while at < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[at]) { at += 1 }
    }

    private var fail: ParseError { ParseError(offset: at) }

    private mutating func expect(_ byte: UInt8) throws(ParseError) {
        guard at < bytes.count, bytes[at] == byte else { throw fail }
        at += 1
    }

    mutating func value(depth: Int) throws(ParseError) -> OrderedJSON {
        guard depth <= maxDepth else { throw fail }
        skipSpace()
        guard at < bytes.count else { throw fail }
        switch bytes[at] {
        case UInt8(ascii: "{"): return try object(depth: depth)
        case UInt8(ascii: "["): return try array(depth: depth)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        default: return .number(try number())
        }
    }

    private mutating func literal(_ word: String) throws(ParseError) {
        for byte in word.utf8 { try expect(byte) }
    }

    private mutating func object(depth: Int) throws(ParseError) -> OrderedJSON {
        try expect(UInt8(ascii: "{"))
        var members: [OrderedJSON.Member] = []
        skipSpace()
        if at < bytes.count, bytes[at] == UInt8(ascii: "}") {
            at += 1
            return .object(members)
        }
        while true {
            skipSpace()
            let key = try string()
            skipSpace()
            try expect(UInt8(ascii: ":"))
            members.append(.init(key: key, value: try value(depth: depth + 1)))
            skipSpace()
            guard at < bytes.count else { throw fail }
            at += 1
            switch bytes[at - 1] {
            case UInt8(ascii: ","): continue
            case UInt8(ascii: "}"): return .object(members)
            default: at -= 1; throw fail
            }
        }
    }

    private mutating func array(depth: Int) throws(ParseError) -> OrderedJSON {
        try expect(UInt8(ascii: "["))
        var items: [OrderedJSON] = []
        skipSpace()
        if at < bytes.count, bytes[at] == UInt8(ascii: "]") {
            at += 1
            return .array(items)
        }
        while true {
            items.append(try value(depth: depth + 1))
            skipSpace()
            guard at < bytes.count else { throw fail }
            at += 1
            switch bytes[at - 1] {
            case UInt8(ascii: ","): continue
            case UInt8(ascii: "]"): return .array(items)
            default: at -= 1; throw fail
            }
        }
    }

    /// -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?
    private mutating func number() throws(ParseError) -> String {
        let start = at
        func isDigit(_ i: Int) -> Bool { i < bytes.count && (0x30...0x39).contains(bytes[i]) }
        func digits() throws(ParseError) {
            guard isDigit(at) else { throw ParseError(offset: at) }
            while isDigit(at) { at += 1 }
        }
        if at < bytes.count, bytes[at] == UInt8(ascii: "-") { at += 1 }
        if at < bytes.count, bytes[at] == UInt8(ascii: "0") { at += 1 } else { try digits() }
        if at < bytes.count, bytes[at] == UInt8(ascii: ".") {
            at += 1
            try digits()
        }
        if at < bytes.count, bytes[at] | 0x20 == UInt8(ascii: "e") {
            at += 1
            if at < bytes.count, bytes[at] == UInt8(ascii: "+") || bytes[at] == UInt8(ascii: "-") { at += 1 }
            try digits()
        }
        return String(decoding: bytes[start..<at], as: UTF8.self)
    }

    private mutating func string() throws(ParseError) -> String {
        try expect(UInt8(ascii: "\""))
        var out: [UInt8] = []
        while at < bytes.count {
            let byte = bytes[at]
            at += 1
            switch byte {
            case UInt8(ascii: "\""): return String(decoding: out, as: UTF8.self)
            case UInt8(ascii: "\\"): out += try escape()
            case ..<0x20: at -= 1; throw fail
            default: out.append(byte)
            }
        }
        throw fail
    }

    /// The bytes one escape (after its backslash) stands for; a lone surrogate becomes U+FFFD.
    private mutating func escape() throws(ParseError) -> [UInt8] {
        guard at < bytes.count else { throw fail }
        at += 1
        switch bytes[at - 1] {
        case UInt8(ascii: "\""): return [0x22]
        case UInt8(ascii: "\\"): return [0x5C]
        case UInt8(ascii: "/"): return [0x2F]
        case UInt8(ascii: "b"): return [0x08]
        case UInt8(ascii: "f"): return [0x0C]
        case UInt8(ascii: "n"): return [0x0A]
        case UInt8(ascii: "r"): return [0x0D]
        case UInt8(ascii: "t"): return [0x09]
        case UInt8(ascii: "u"):
            var scalar = try hex4()
            if (0xD800..<0xDC00).contains(scalar), bytes[at...].starts(with: Array("\\u".utf8)) {
                let save = at
                at += 2
                let low = try hex4()
                if (0xDC00..<0xE000).contains(low) {
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                } else {
                    at = save
                }
            }
            return Array(String(Unicode.Scalar(scalar) ?? "\u{FFFD}").utf8)
        default:
            at -= 1
            throw fail
        }
    }

    private mutating func hex4() throws(ParseError) -> UInt32 {
        guard at + 4 <= bytes.count else { throw fail }
        var value: UInt32 = 0
        for byte in bytes[at..<at + 4] {
            let digit: UInt8
            switch byte {
            case 0x30...0x39: digit = byte - 0x30
            case 0x41...0x46, 0x61...0x66: digit = (byte | 0x20) - 0x61 + 10
            default: throw fail
            }
            value = value << 4 | UInt32(digit)
        }
        at += 4
        return value
    }
}
