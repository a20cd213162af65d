// SPDX-License-Identifier: GPL-2.0-or-later
import NotifyRules

/// A line --dry-run prints: its text, or with --json the object.
protocol DryRunLine: Encodable {
    var text: String { get }
}

/// One line of --dry-run: a notification and what would become of it, or a close.
struct NotifyReport: DryRunLine {
    var action: String
    var app: String?
    var summary: String?
    var urgency: String?
    var category: String?
    var desktop_id: UInt32
    var reason: String?

    init(_ notification: DesktopNotification, desktopID: UInt32, verdict: Verdict) {
        action = verdict.forwards ? "send" : "skip"
        app = notification.appName
        summary = notification.summary
        urgency = notification.urgency.description
        category = notification.category
        desktop_id = desktopID
        reason = verdict.forwards ? nil : verdict.description
    }

    init(closing desktopID: UInt32) {
        action = "close"
        desktop_id = desktopID
    }

    var text: String {
        guard action != "close" else { return "close desktop_id=\(desktop_id)" }
        var line = "\(action) app=\(Self.quoted(app ?? "")) summary=\(Self.quoted(summary ?? "")) urgency=\(urgency ?? "")"
        line += " category=\(category.map(Self.quoted) ?? "-") desktop_id=\(desktop_id)"
        if let reason { line += ": \(reason)" }
        return line
    }

    /// In quotes, with quotes, backslashes and line breaks escaped: one line per notification.
    static func quoted(_ text: String) -> String {
        var out = "\""
        for c in text.unicodeScalars {
            switch c {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default: out.unicodeScalars.append(c)
            }
        }
        return out + "\""
    }
}
