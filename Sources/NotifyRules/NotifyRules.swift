// SPDX-License-Identifier: GPL-2.0-or-later

/// What the notification agent forwards to glassd, from notify.toml: a minimum urgency, rules
/// by app and category (the first that matches decides), quiet hours, and whether the calendar's
/// next event goes too. No file forwards everything.
public struct NotifyRules: Sendable, Equatable {
    public enum Action: String, Sendable, Equatable {
        case allow, deny
    }

    /// One [[rule]]: matches a notification when all it names match (at least one of app and
    /// category is named).
    public struct Rule: Sendable, Equatable, CustomStringConvertible {
        /// Compared without regard to case.
        public var app: String?
        /// Matches itself and its sub-categories: "email" matches "email" and "email.arrived".
        public var category: String?
        public var action: Action

        public init(app: String? = nil, category: String? = nil, action: Action) {
            self.app = app
            self.category = category
            self.action = action
        }

        public func matches(_ notification: DesktopNotification) -> Bool {
            if let app, app.lowercased() != notification.appName.lowercased() { return false }
            if let category {
                guard let theirs = notification.category, theirs == category || theirs.hasPrefix(category + ".") else {
                    return false
                }
            }
            return app != nil || category != nil
        }

        public var description: String {
            let what = [app.map { "app \"\($0)\"" }, category.map { "category \"\($0)\"" }].compactMap { $0 }
            return "\(action.rawValue) \(what.joined(separator: " and "))"
        }
    }

    public var minUrgency: Urgency
    public var rules: [Rule]
    public var quietHours: QuietHours?
    /// Whether the desktop calendar's next event is sent to glassd (`calendar = false`: it is not).
    public var calendar: Bool

    public init(minUrgency: Urgency = .low, rules: [Rule] = [], quietHours: QuietHours? = nil, calendar: Bool = true) {
        self.minUrgency = minUrgency
        self.rules = rules
        self.quietHours = quietHours
        self.calendar = calendar
    }
}

/// What the rules decided for one notification.
public enum Verdict: Sendable, Equatable, CustomStringConvertible {
    /// Forwarded; `rule` is the (1-based) allow rule that matched, if one did.
    case forward(rule: Int?)
    /// The (1-based) deny rule that matched.
    case deniedByRule(Int, NotifyRules.Rule)
    /// Below min_urgency (which it names).
    case belowMinUrgency(Urgency)
    /// Within the quiet hours (which it names).
    case quietHours(QuietHours)

    public var forwards: Bool {
        if case .forward = self { true } else { false }
    }

    public var description: String {
        switch self {
        case .forward(nil): "forward"
        case .forward(let rule?): "forward (rule \(rule))"
        case .deniedByRule(let index, let rule): "blocked by rule \(index) (\(rule))"
        case .belowMinUrgency(let minimum): "blocked: below min_urgency \(minimum)"
        case .quietHours(let hours): "blocked: quiet hours \(hours)"
        }
    }
}

extension NotifyRules {
    /// The verdict for `notification` at `minuteOfDay` (local time, minutes after midnight).
    ///
    /// The first rule that matches decides: deny blocks it, whatever its urgency (the user named
    /// that app or category); allow lets it past min_urgency. Quiet hours then hold back
    /// everything but critical, allowed or not. Critical always passes min_urgency.
    public func decide(_ notification: DesktopNotification, minuteOfDay: Int) -> Verdict {
        let match = rules.indices.first { rules[$0].matches(notification) }
        if let match, rules[match].action == .deny { return .deniedByRule(match + 1, rules[match]) }
        let critical = notification.urgency == .critical
        if match == nil && !critical && notification.urgency < minUrgency { return .belowMinUrgency(minUrgency) }
        if let quietHours, !critical, quietHours.contains(minuteOfDay: minuteOfDay) { return .quietHours(quietHours) }
        return .forward(rule: match.map { $0 + 1 })
    }
}
