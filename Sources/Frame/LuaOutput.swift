// SPDX-License-Identifier: GPL-2.0-or-later

/// What the Frame prints, as the host reads it. The firmware sends each `print` argument as one
/// notification and adds no newline (its `lua_writeline` is empty); an error message is one
/// notification too. Other firmware may end lines with `\n` or `\r\n`, so a notification is
/// split into lines, and empty ones are dropped: glassd's commands never print an empty value.
public enum LuaOutput {
    /// The lines of one text notification.
    public static func lines(_ bytes: [UInt8]) -> [String] {
        String(decoding: bytes.filter { $0 != 0x0D }, as: UTF8.self)
            .split(separator: "\n", omittingEmptySubsequences: true)
            .map(String.init)
    }

    /// Whether a printed line is a Lua error message, as far as it can be told: the position
    /// Lua puts in front of a message raised in a REPL chunk (`[string "…"]:1: …`) or in a file
    /// (`glassd_app.lua:12: …`), the firmware's break message, or the word "error" (as in "error
    /// loading module"). glassd's commands print only numbers, versions and their own tokens.
    public static func isError(_ line: String) -> Bool {
        if line.hasPrefix("[string \""), let close = line.firstRange(of: "\"]:"), hasLineNumber(line[close.upperBound...]) {
            return true
        }
        if let dot = line.firstRange(of: ".lua:"), !line[..<dot.lowerBound].contains(" "), hasLineNumber(line[dot.upperBound...]) {
            return true
        }
        return line.contains("break signal") || line.lowercased().contains("error")
    }

    /// `12: …`: digits, then a colon.
    private static func hasLineNumber(_ rest: Substring) -> Bool {
        let digits = rest.prefix(while: \.isASCIIDigit)
        return !digits.isEmpty && rest.dropFirst(digits.count).first == ":"
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
