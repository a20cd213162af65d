// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation
import TOMLCheck
import TOMLKit

/// A notify.toml that cannot be used: what is wrong, naming the file and its line or key.
public struct NotifyRulesError: Error, Equatable, CustomStringConvertible {
    public var description: String
}

extension NotifyRules {
    /// $XDG_CONFIG_HOME/glassd/notify.toml, or ~/.config/glassd/notify.toml; nil with neither
    /// variable set.
    public static func defaultPath(environment: [String: String]) -> String? {
        if let config = environment["XDG_CONFIG_HOME"], config.hasPrefix("/") { return config + "/glassd/notify.toml" }
        guard let home = environment["HOME"], !home.isEmpty else { return nil }
        return home + "/.config/glassd/notify.toml"
    }

    /// Reads `path` (given with --config: it must exist), else the default file (which may be
    /// missing: then everything is forwarded).
    public static func load(path: String?, environment: [String: String]) throws(NotifyRulesError) -> NotifyRules {
        guard let file = path ?? defaultPath(environment: environment) else { return NotifyRules() }
        guard let data = FileManager.default.contents(atPath: file) else {
            if path == nil && !FileManager.default.fileExists(atPath: file) { return NotifyRules() }
            throw NotifyRulesError(description: "cannot read \(file)")
        }
        guard let text = String(validating: data, as: UTF8.self) else {
            throw NotifyRulesError(description: "\(file): not UTF-8 text")
        }
        return try parse(text, file: file)
    }

    public static func parse(_ text: String, file: String = "notify.toml") throws(NotifyRulesError) -> NotifyRules {
        func fail(_ what: String) -> NotifyRulesError { NotifyRulesError(description: "\(file): \(what)") }
        do {
            try TOMLShape.check(text)
        } catch {
            throw fail("\(error.what) at line \(error.line)")
        }
        let table: TOMLTable
        do {
            table = try TOMLTable(string: text)
        } catch let error as TOMLParseError {
            throw fail("\(error.description) at line \(error.source.begin.line)")
        } catch {
            throw fail("\(error)")
        }
        let known: Set = ["min_urgency", "calendar", "rule", "quiet_hours"]
        if let unknown = table.keys.sorted().first(where: { !known.contains($0) }) {
            throw fail("unknown key \(unknown) (the keys are min_urgency, calendar, [[rule]] and [quiet_hours])")
        }
        var rules = NotifyRules()
        if let value = table["min_urgency"] {
            guard let name = value.string, let urgency = Urgency(name: name) else {
                throw fail("min_urgency must be \"low\", \"normal\" or \"critical\"")
            }
            rules.minUrgency = urgency
        }
        if let value = table["calendar"] {
            guard let on = value.bool else { throw fail("calendar must be true or false") }
            rules.calendar = on
        }
        if let value = table["rule"] {
            guard let array = value.array else { throw fail("rule must be a list of tables: [[rule]]") }
            for (index, element) in array.enumerated() {
                guard let rule = element.table else { throw fail("rule must be a list of tables: [[rule]]") }
                rules.rules.append(try self.rule(rule, number: index + 1, fail: fail))
            }
        }
        if let value = table["quiet_hours"] {
            guard let hours = value.table else { throw fail("quiet_hours must be a table: [quiet_hours]") }
            rules.quietHours = try quietHours(hours, fail: fail)
        }
        return rules
    }

    private static func rule(
        _ table: TOMLTable, number: Int, fail: (String) -> NotifyRulesError
    ) throws(NotifyRulesError) -> Rule {
        let known: Set = ["app", "category", "action"]
        if let unknown = table.keys.sorted().first(where: { !known.contains($0) }) {
            throw fail("rule \(number) has an unknown key \(unknown) (a rule has app, category and action)")
        }
        func text(_ key: String) throws(NotifyRulesError) -> String? {
            guard let value = table[key] else { return nil }
            guard let s = value.string, !s.isEmpty else { throw fail("rule \(number): \(key) must be a non-empty string") }
            return s
        }
        let app = try text("app")
        let category = try text("category")
        guard app != nil || category != nil else { throw fail("rule \(number) names neither app nor category") }
        guard let actionName = try text("action") else { throw fail("rule \(number) has no action (\"allow\" or \"deny\")") }
        guard let action = Action(rawValue: actionName) else {
            throw fail("rule \(number): action must be \"allow\" or \"deny\", not \"\(actionName)\"")
        }
        return Rule(app: app, category: category, action: action)
    }

    private static func quietHours(_ table: TOMLTable, fail: (String) -> NotifyRulesError) throws(NotifyRulesError) -> QuietHours {
        let known: Set = ["start", "end"]
        if let unknown = table.keys.sorted().first(where: { !known.contains($0) }) {
            throw fail("quiet_hours has an unknown key \(unknown) (it has start and end)")
        }
        func time(_ key: String) throws(NotifyRulesError) -> Int {
            guard let value = table[key] else { throw fail("quiet_hours needs \(key) (\"HH:MM\")") }
            guard let text = value.string, let minutes = QuietHours.minutes(text) else {
                throw fail("quiet_hours \(key) must be a time as \"HH:MM\" (00:00 to 23:59)")
            }
            return minutes
        }
        let hours = QuietHours(start: try time("start"), end: try time("end"))
        guard hours.start != hours.end else { throw fail("quiet_hours start and end are the same time") }
        return hours
    }
}
