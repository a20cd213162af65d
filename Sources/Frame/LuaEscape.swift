// SPDX-License-Identifier: GPL-2.0-or-later

/// Puts arbitrary file contents inside a double-quoted Lua string literal, and cuts the result
/// into pieces that each stay a valid literal on their own (one `f:write("…")` per BLE write).
///
/// The text is taken apart into units: one per UTF-8 sequence, or one escape. `\r` is dropped
/// (files are stored with bare newlines); `\\`, `\n`, `\t`, `'` and `"` get their short escapes;
/// every other control byte (and any byte that is not part of valid UTF-8) becomes a three-digit
/// decimal escape `\ddd`, always three digits so a digit that follows cannot join it. Nothing raw
/// below 0x20 remains: a NUL would end the firmware's copy of the chunk (it uses `strcpy`), and
/// a raw newline would end the literal. Pieces are cut only between units, so none splits a UTF-8
/// sequence or an escape.
public enum LuaEscape {
    /// The longest unit: a 4-byte UTF-8 sequence, or `\ddd`.
    public static let longestUnit = 4

    /// The escaped units of `bytes`, in order.
    public static func units(_ bytes: [UInt8]) -> [[UInt8]] {
        var units: [[UInt8]] = []
        units.reserveCapacity(bytes.count)
        var iterator = bytes.makeIterator()
        var parser = Unicode.UTF8.ForwardParser()
        var offset = 0
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let encoded):
                let sequence = Array(encoded)
                offset += sequence.count
                if sequence.count == 1 {
                    if let unit = unit(sequence[0]) { units.append(unit) }
                } else {
                    units.append(sequence)
                }
            case .error(let length):
                // Not UTF-8: each byte as a decimal escape, so the file keeps it exactly.
                for byte in bytes[offset..<(offset + length)] { units.append(decimal(byte)) }
                offset += length
            case .emptyInput:
                return units
            }
        }
    }

    /// The whole of `bytes`, escaped.
    public static func escape(_ bytes: [UInt8]) -> String {
        String(decoding: units(bytes).joined(), as: UTF8.self)
    }

    /// The escaped text in pieces of at most `limit` bytes each, cut between units.
    public static func chunks(_ bytes: [UInt8], limit: Int) throws(LuaUploadError) -> [String] {
        guard limit >= longestUnit else { throw .limitTooSmall(limit) }
        var chunks: [String] = []
        var current: [UInt8] = []
        for unit in units(bytes) {
            if current.count + unit.count > limit {
                chunks.append(String(decoding: current, as: UTF8.self))
                current.removeAll(keepingCapacity: true)
            }
            current += unit
        }
        if !current.isEmpty { chunks.append(String(decoding: current, as: UTF8.self)) }
        return chunks
    }

    /// One ASCII byte's unit; nil for `\r`, which is dropped.
    private static func unit(_ byte: UInt8) -> [UInt8]? {
        switch byte {
        case 0x0D: nil
        case 0x5C: Array(#"\\"#.utf8)
        case 0x0A: Array(#"\n"#.utf8)
        case 0x09: Array(#"\t"#.utf8)
        case 0x27: Array(#"\'"#.utf8)
        case 0x22: Array(#"\""#.utf8)
        case ..<0x20, 0x7F...: decimal(byte)
        default: [byte]
        }
    }

    private static func decimal(_ byte: UInt8) -> [UInt8] {
        let digits = String(byte)
        return Array(("\\" + String(repeating: "0", count: 3 - digits.count) + digits).utf8)
    }
}

/// Why file-upload commands could not be made.
public enum LuaUploadError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Not even one escape fits this many bytes.
    case limitTooSmall(Int)
    /// A device file name glassd would not use (letters, digits, `_`, `-` and `.` only).
    case badFileName(String)

    public var description: String {
        switch self {
        case .limitTooSmall(let n): "a Lua chunk of \(n) bytes is too small for an upload"
        case .badFileName(let name): "refused to name a device file \(name.debugDescription)"
        }
    }
}
