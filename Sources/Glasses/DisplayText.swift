// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation

/// Text for a display font (the Monocle's), which has glyphs for printable ASCII only: everything
/// else is transliterated (diacritics folded, common punctuation and letters spelled in ASCII) or
/// becomes "?". Newlines stay (the scripts break lines there); other control characters go.
public enum DisplayText {
    private static let spelled: [Character: String] = [
        "\u{2018}": "'", "\u{2019}": "'", "\u{201A}": "'", "\u{201B}": "'", "\u{2032}": "'",
        "\u{201C}": "\"", "\u{201D}": "\"", "\u{201E}": "\"", "\u{00AB}": "\"", "\u{00BB}": "\"", "\u{2033}": "\"",
        "\u{2013}": "-", "\u{2014}": "-", "\u{2012}": "-", "\u{2010}": "-", "\u{2011}": "-", "\u{2212}": "-",
        "\u{2026}": "...", "\u{2022}": "*", "\u{00B7}": ".", "\u{00A0}": " ", "\u{2009}": " ", "\u{202F}": " ",
        "\u{00DF}": "ss", "\u{00C6}": "AE", "\u{00E6}": "ae", "\u{0152}": "OE", "\u{0153}": "oe",
        "\u{00D8}": "O", "\u{00F8}": "o", "\u{0141}": "L", "\u{0142}": "l", "\u{0110}": "D", "\u{0111}": "d",
        "\u{00DE}": "Th", "\u{00FE}": "th", "\u{00D0}": "D", "\u{00F0}": "d", "\u{0131}": "i",
        "\u{20AC}": "EUR", "\u{00A3}": "GBP", "\u{00A5}": "JPY", "\u{00A9}": "(c)", "\u{00AE}": "(R)",
        "\u{2122}": "TM", "\u{00B0}": " deg", "\u{00D7}": "x", "\u{00F7}": "/", "\u{00BD}": "1/2",
        "\u{00BC}": "1/4", "\u{00BE}": "3/4", "\u{2192}": "->", "\u{2190}": "<-", "\u{00BF}": "?", "\u{00A1}": "!",
    ]

    /// `text` in printable ASCII and "\n".
    public static func ascii(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for character in text {
            if character == "\n" || character == "\r\n" {
                out.append("\n")
            } else if character == "\t" {
                out.append(" ")
            } else if let ascii = character.asciiValue {
                if ascii >= 0x20 && ascii < 0x7F { out.append(character) }
            } else if let spelled = spelled[character] {
                out += spelled
            } else {
                let folded = String(character).folding(options: [.diacriticInsensitive, .widthInsensitive], locale: nil)
                let kept = folded.unicodeScalars.filter { $0.isASCII && $0.value >= 0x20 && $0.value < 0x7F }
                if kept.isEmpty {
                    // Marks and joiners alone (a combining accent) vanish; anything else shows as "?".
                    if !character.unicodeScalars.allSatisfy({ $0.properties.generalCategory == .nonspacingMark || $0.properties.isJoinControl }) {
                        out.append("?")
                    }
                } else {
                    out.unicodeScalars.append(contentsOf: kept)
                }
            }
        }
        return out
    }

    /// Splits `text` into payloads of at most `limit` UTF-8 bytes, preferring to break after a
    /// space so a word travels whole when it can, and never inside a character's bytes.
    public static func chunks(_ text: String, limit: Int) -> [String] {
        precondition(limit > 0)
        var bytes = Substring(text).utf8[...]
        var out: [String] = []
        while !bytes.isEmpty {
            guard bytes.count > limit else {
                out.append(String(decoding: bytes, as: UTF8.self))
                break
            }
            var end = bytes.index(bytes.startIndex, offsetBy: limit)
            if let space = bytes[bytes.startIndex..<end].lastIndex(of: 0x20), space > bytes.startIndex {
                end = bytes.index(after: space)
            } else {
                // Back to the start of a UTF-8 sequence (continuation bytes are 10xxxxxx).
                var start = end
                while start > bytes.startIndex, bytes[start] & 0xC0 == 0x80 { start = bytes.index(before: start) }
                if start > bytes.startIndex { end = start }
            }
            out.append(String(decoding: bytes[bytes.startIndex..<end], as: UTF8.self))
            bytes = bytes[end...]
        }
        return out
    }
}
