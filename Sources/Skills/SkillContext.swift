// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation

/// What a local skill may know besides the question: the clock, the zone, the glasses and the
/// last turn. The daemon fills it in; tests pass a fixed clock.
public struct SkillContext: Sendable {
    public var now: Date
    /// The wearer's zone: times and dates are told in it.
    public var timeZone: TimeZone
    /// Kept for a later localisation. Answers are English with fixed names and a 24-hour clock
    /// (en_US_POSIX-like), whatever the locale, so they are the same on every machine.
    public var locale: Locale
    /// nil: no glasses are paired.
    public var glasses: GlassesState?
    /// The previous question and its answer's text, for "what did I just ask" and "repeat that".
    public var lastTurn: (question: String, answer: String)?

    public init(
        now: Date = Date(), timeZone: TimeZone = .current, locale: Locale = Locale(identifier: "en_US_POSIX"),
        glasses: GlassesState? = nil, lastTurn: (question: String, answer: String)? = nil
    ) {
        self.now = now
        self.timeZone = timeZone
        self.locale = locale
        self.glasses = glasses
        self.lastTurn = lastTurn
    }
}

/// The paired glasses as the glasses skill reports them.
public struct GlassesState: Sendable, Equatable {
    public var connected: Bool
    /// Percent, 0...100; nil when the glasses have not reported it.
    public var battery: Int?
    public var name: String?
    /// The session's state word: ready, connecting, disconnected, updating, ...
    public var state: String

    public init(connected: Bool, battery: Int? = nil, name: String? = nil, state: String) {
        self.connected = connected
        self.battery = battery
        self.name = name
        self.state = state
    }
}
