// SPDX-License-Identifier: GPL-2.0-or-later

/// What Lua makes of the inside of a double-quoted string literal: the test's own reading of
/// the escapes, independent of the code under test. nil where Lua would refuse the literal (a
/// raw newline or quote, a backslash at the end, an unknown escape).
enum LuaUnescape {
    static func bytes(_ literal: String) -> [UInt8]? {
        let input = Array(literal.utf8)
        var out: [UInt8] = []
        var i = 0
        while i < input.count {
            let byte = input[i]
            if byte == 0x0A || byte == 0x0D || byte == 0x22 { return nil }
            guard byte == 0x5C else {
                out.append(byte)
                i += 1
                continue
            }
            guard i + 1 < input.count else { return nil }
            let next = input[i + 1]
            switch next {
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "\\"), UInt8(ascii: "'"), UInt8(ascii: "\""): out.append(next)
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                var value = 0
                var j = i + 1
                while j < input.count, j < i + 4, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(input[j]) {
                    value = value * 10 + Int(input[j] - UInt8(ascii: "0"))
                    j += 1
                }
                guard value <= 255 else { return nil }
                out.append(UInt8(value))
                i = j
                continue
            default: return nil
            }
            i += 2
        }
        return out
    }
}
