// SPDX-License-Identifier: GPL-2.0-or-later

/// An Evolution Data Server source, from its key file (the Source object's Data property).
public enum CalendarSource {
    /// Whether the key file describes a calendar the user has on: it has a [Calendar] section,
    /// [Data Source] Enabled is not false and [Calendar] Selected is not false (a calendar the
    /// desktop's calendar shows).
    public static func isShownCalendar(keyFile: String) -> Bool {
        var section = ""
        var isCalendar = false, enabled = true, selected = true
        for raw in keyFile.split(whereSeparator: \.isNewline) {
            let line = raw.trimmingWhitespace()
            if line.hasPrefix("#") || line.isEmpty { continue }
            if line.hasPrefix("["), line.hasSuffix("]") {
                section = String(line.dropFirst().dropLast())
                if section == "Calendar" { isCalendar = true }
                continue
            }
            guard let equals = line.firstIndex(of: "=") else { continue }
            let key = line[..<equals].trimmingWhitespace(), value = line[line.index(after: equals)...].trimmingWhitespace()
            switch (section, key) {
            case ("Data Source", "Enabled"): enabled = value != "false"
            case ("Calendar", "Selected"): selected = value != "false"
            default: break
            }
        }
        return isCalendar && enabled && selected
    }
}

extension StringProtocol {
    fileprivate func trimmingWhitespace() -> Substring {
        let s = Substring(self)
        guard let first = s.firstIndex(where: { !$0.isWhitespace }), let last = s.lastIndex(where: { !$0.isWhitespace }) else { return "" }
        return s[first...last]
    }
}
