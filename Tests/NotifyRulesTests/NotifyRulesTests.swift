// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation
import NotifyRules
import Testing

@Suite("Notification rules", .timeLimit(.minutes(1)))
struct NotifyRulesTests {
    static let example = """
        min_urgency = "normal"   # low | normal | critical
        [[rule]]
        app = "Spammy"
        action = "deny"
        [[rule]]
        category = "email"
        action = "allow"
        [[rule]]
        app = "Chat"
        category = "im.received"
        action = "deny"
        [quiet_hours]
        start = "22:00"
        end = "07:00"
        """

    static func note(_ app: String, _ urgency: Urgency = .normal, category: String? = nil) -> DesktopNotification {
        DesktopNotification(appName: app, summary: "s", urgency: urgency, category: category)
    }

    static let noon = 12 * 60

    @Test("the example file: its minimum, its rules in order, its quiet hours")
    func parsesExample() throws {
        let rules = try NotifyRules.parse(Self.example)
        #expect(rules.minUrgency == .normal)
        #expect(
            rules.rules == [
                .init(app: "Spammy", action: .deny), .init(category: "email", action: .allow),
                .init(app: "Chat", category: "im.received", action: .deny),
            ])
        #expect(rules.quietHours == QuietHours(start: 22 * 60, end: 7 * 60))
    }

    @Test("an empty file forwards everything, at any time")
    func emptyFile() throws {
        let rules = try NotifyRules.parse("")
        #expect(rules == NotifyRules())
        for urgency in Urgency.allCases {
            #expect(rules.decide(Self.note("Any", urgency), minuteOfDay: 0) == .forward(rule: nil))
        }
    }

    @Test("app matches without regard to case; a category matches itself and its sub-categories, not a longer word")
    func matching() {
        let app = NotifyRules.Rule(app: "Spammy", action: .deny)
        #expect(app.matches(Self.note("spammy")))
        #expect(app.matches(Self.note("SPAMMY")))
        #expect(!app.matches(Self.note("Spammy2")))
        let category = NotifyRules.Rule(category: "email", action: .deny)
        #expect(category.matches(Self.note("Mail", category: "email")))
        #expect(category.matches(Self.note("Mail", category: "email.arrived")))
        #expect(!category.matches(Self.note("Mail", category: "emails")))
        #expect(!category.matches(Self.note("Mail", category: nil)))
        let both = NotifyRules.Rule(app: "Chat", category: "im", action: .deny)
        #expect(both.matches(Self.note("chat", category: "im.received")))
        #expect(!both.matches(Self.note("chat", category: "email")))
        #expect(!both.matches(Self.note("Other", category: "im.received")))
    }

    @Test("the first rule that matches decides; deny blocks even critical; allow passes min_urgency")
    func firstMatchWins() throws {
        let rules = try NotifyRules.parse(Self.example)
        #expect(rules.decide(Self.note("Spammy", .critical), minuteOfDay: Self.noon) == .deniedByRule(1, rules.rules[0]))
        // Spammy's email: rule 1 comes first.
        #expect(rules.decide(Self.note("spammy", category: "email.arrived"), minuteOfDay: Self.noon) == .deniedByRule(1, rules.rules[0]))
        #expect(rules.decide(Self.note("Mail", .low, category: "email.arrived"), minuteOfDay: Self.noon) == .forward(rule: 2))
        #expect(rules.decide(Self.note("Chat", category: "im.received"), minuteOfDay: Self.noon) == .deniedByRule(3, rules.rules[2]))
        #expect(rules.decide(Self.note("Chat", category: "im.error"), minuteOfDay: Self.noon) == .forward(rule: nil))
    }

    @Test("min_urgency blocks what is below it; critical always passes")
    func minUrgency() throws {
        let rules = try NotifyRules.parse("min_urgency = \"critical\"")
        #expect(rules.decide(Self.note("A", .low), minuteOfDay: Self.noon) == .belowMinUrgency(.critical))
        #expect(rules.decide(Self.note("A", .normal), minuteOfDay: Self.noon) == .belowMinUrgency(.critical))
        #expect(rules.decide(Self.note("A", .critical), minuteOfDay: Self.noon) == .forward(rule: nil))
        let normal = try NotifyRules.parse("min_urgency = \"normal\"")
        #expect(normal.decide(Self.note("A", .low), minuteOfDay: Self.noon) == .belowMinUrgency(.normal))
        #expect(normal.decide(Self.note("A", .normal), minuteOfDay: Self.noon) == .forward(rule: nil))
    }

    @Test("quiet hours across midnight: from start (included) to end (excluded); critical and the hours outside pass; an allow rule does not pass them")
    func quietHoursAcrossMidnight() throws {
        let rules = try NotifyRules.parse(Self.example)
        let quiet = try #require(rules.quietHours)
        for minute in [22 * 60, 23 * 60 + 59, 0, 3 * 60, 6 * 60 + 59] {
            #expect(rules.decide(Self.note("A"), minuteOfDay: minute) == .quietHours(quiet), "minute \(minute)")
            #expect(rules.decide(Self.note("A", .critical), minuteOfDay: minute) == .forward(rule: nil), "minute \(minute)")
            #expect(rules.decide(Self.note("Mail", category: "email"), minuteOfDay: minute) == .quietHours(quiet))
        }
        for minute in [7 * 60, Self.noon, 21 * 60 + 59] {
            #expect(rules.decide(Self.note("A"), minuteOfDay: minute) == .forward(rule: nil), "minute \(minute)")
        }
    }

    @Test("quiet hours within one day")
    func quietHoursSameDay() {
        let hours = QuietHours(start: 13 * 60, end: 14 * 60 + 30)
        #expect(!hours.contains(minuteOfDay: 13 * 60 - 1))
        #expect(hours.contains(minuteOfDay: 13 * 60))
        #expect(hours.contains(minuteOfDay: 14 * 60 + 29))
        #expect(!hours.contains(minuteOfDay: 14 * 60 + 30))
        #expect(!hours.contains(minuteOfDay: 0))
        #expect(hours.description == "13:00-14:30")
    }

    @Test("times are HH:MM from 00:00 to 23:59, nothing else")
    func times() {
        #expect(QuietHours.minutes("00:00") == 0)
        #expect(QuietHours.minutes("23:59") == 23 * 60 + 59)
        for bad in ["24:00", "7:00", "07:60", "0700", "07:00:00", "", "ab:cd", "-1:00", "07:0", "٠٧:٠٠"] {
            #expect(QuietHours.minutes(bad) == nil, "\(bad)")
        }
    }

    @Test(
        "a bad file is an error naming its line or its key",
        arguments: [
            ("min_urgency = \"urgent\"", "min_urgency"),
            ("min_urgency = 2", "min_urgency"),
            ("minimum = \"low\"", "unknown key minimum"),
            ("[[rule]]\naction = \"deny\"", "rule 1 names neither app nor category"),
            ("[[rule]]\napp = \"A\"", "rule 1 has no action"),
            ("[[rule]]\napp = \"A\"\naction = \"allow\"\n[[rule]]\napp = \"B\"\naction = \"block\"", "rule 2: action must be \"allow\" or \"deny\", not \"block\""),
            ("[[rule]]\napp = \"A\"\naction = \"deny\"\nurgency = \"low\"", "rule 1 has an unknown key urgency"),
            ("[[rule]]\napp = \"\"\naction = \"deny\"", "rule 1: app must be a non-empty string"),
            ("rule = \"deny\"", "rule must be a list of tables"),
            ("[quiet_hours]\nstart = \"22:00\"", "quiet_hours needs end"),
            ("[quiet_hours]\nstart = \"22:00\"\nend = \"25:00\"", "quiet_hours end must be a time"),
            ("[quiet_hours]\nstart = 22:00:00\nend = \"07:00\"", "quiet_hours start must be a time"),
            ("[quiet_hours]\nstart = \"07:00\"\nend = \"07:00\"", "start and end are the same"),
            ("[quiet_hours]\nstart = \"22:00\"\nend = \"07:00\"\nzone = \"UTC\"", "quiet_hours has an unknown key zone"),
            ("min_urgency = \"low\"\n[[rule]\napp = \"A\"", "line 2"),
            ("min_urgency = \"low\"\n\napp = ", "line 3"),
            ("min_urgency = \"low\"\nmin_urgency = \"normal\"", "line 2"),
            ("calendar = \"no\"", "calendar must be true or false"),
            ("calendar = 0", "calendar must be true or false"),
        ])
    func badFiles(text: String, expected: String) {
        #expect {
            try NotifyRules.parse(text, file: "/home/u/.config/glassd/notify.toml")
        } throws: { error in
            let description = String(describing: error)
            return description.hasPrefix("/home/u/.config/glassd/notify.toml: ") && description.contains(expected)
        }
    }

    @Test("calendar: on unless the file says calendar = false")
    func calendarKey() throws {
        #expect(NotifyRules().calendar)
        #expect(try NotifyRules.parse(Self.example).calendar)
        #expect(try NotifyRules.parse("calendar = true").calendar)
        #expect(try !NotifyRules.parse("calendar = false\nmin_urgency = \"low\"").calendar)
    }

    @Test("the default file: XDG_CONFIG_HOME, else ~/.config; a missing default file forwards everything, a missing --config file is an error")
    func loading() throws {
        #expect(NotifyRules.defaultPath(environment: ["XDG_CONFIG_HOME": "/x", "HOME": "/h"]) == "/x/glassd/notify.toml")
        #expect(NotifyRules.defaultPath(environment: ["XDG_CONFIG_HOME": "relative", "HOME": "/h"]) == "/h/.config/glassd/notify.toml")
        #expect(NotifyRules.defaultPath(environment: ["HOME": "/h"]) == "/h/.config/glassd/notify.toml")
        #expect(NotifyRules.defaultPath(environment: [:]) == nil)
        let dir = NSTemporaryDirectory() + "notify-rules-" + UUID().uuidString.prefix(8)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(try NotifyRules.load(path: nil, environment: ["XDG_CONFIG_HOME": dir]) == NotifyRules())
        #expect(throws: NotifyRulesError.self) { try NotifyRules.load(path: dir + "/none.toml", environment: [:]) }
        try FileManager.default.createDirectory(atPath: dir + "/glassd", withIntermediateDirectories: true)
        try "min_urgency = \"critical\"\n".write(toFile: dir + "/glassd/notify.toml", atomically: true, encoding: .utf8)
        #expect(try NotifyRules.load(path: nil, environment: ["XDG_CONFIG_HOME": dir]).minUrgency == .critical)
        try Data([0x6d, 0xff, 0xfe]).write(to: URL(fileURLWithPath: dir + "/bad.toml"))
        #expect(throws: NotifyRulesError.self) { try NotifyRules.load(path: dir + "/bad.toml", environment: [:]) }
    }
}
