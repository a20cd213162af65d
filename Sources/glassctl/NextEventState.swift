// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import DesktopCalendar
import Foundation
import NotifyRules

/// The calendar half of the agent: when to read the desktop's calendar, what glassd has, when to
/// send it the next event. Pure: events in, effects out (through `NotifyAgentState`).
///
/// It reads at start, when the calendar says something changed, when the event it found ends,
/// and at local midnight (one timer, re-armed after each read: the lookahead moves on, and
/// glassd's "today"/"Tue" with it); reads that are asked for while one runs make one more after it.
/// glassd is sent the event when it differs from what glassd has; glassd's leaving the bus makes
/// that unknown, so it is sent again (a clear too) when glassd is back.
struct NextEventState {
    let dryRun: Bool
    /// Whose midnight wakes it.
    let zone: TimeZone

    private var reading = false
    private var readAgain = false
    /// The latest read's event (nil: none); unset before the first read.
    private var current: NextEvent??
    /// What glassd has: unset when unknown (at start, after it left the bus or a call failed).
    private var glassdHas: NextEvent??
    private var inFlight: NextEvent??
    /// glassd left the bus while a call was in flight: whatever that call's outcome, the glassd
    /// that may be back has not got it (the outcome can come after the leaving).
    private var leftDuringCall = false
    private var glassdPresent = false
    /// --dry-run: the last event printed.
    private var reported: NextEvent??
    /// The last note about reading the calendar (logged when it changes, not at every read).
    private var note: String?

    init(dryRun: Bool, zone: TimeZone = .current) {
        self.dryRun = dryRun
        self.zone = zone
    }

    /// At start: read the calendar, or with it turned off, have glassd show none.
    mutating func start(enabled: Bool) -> [AgentEffect] {
        guard enabled else {
            current = .some(nil)
            var effects: [AgentEffect] = []
            sendIfNeeded(&effects)
            return effects
        }
        reading = true
        return [.readCalendar]
    }

    mutating func handle(_ event: AgentEvent) -> [AgentEffect] {
        var effects: [AgentEffect] = []
        switch event {
        case .calendarChanged, .calendarTimer:
            if reading {
                readAgain = true
            } else {
                reading = true
                effects.append(.readCalendar)
            }
        case .calendarRead(let next, let now, let note):
            reading = false
            current = .some(next)
            if note != self.note, let note { effects.append(.log(note)) }
            self.note = note
            effects.append(.wakeCalendar(at: wake(after: now, next)))
            if readAgain {
                readAgain = false
                reading = true
                effects.append(.readCalendar)
            }
        case .glassdPresent(let present):
            if !present {
                glassdHas = nil
                if inFlight != nil { leftDuringCall = true }
            }
            glassdPresent = present
        case .eventSent(let outcome):
            guard let sent = inFlight else { break }
            inFlight = nil
            let stale = leftDuringCall
            leftDuringCall = false
            switch outcome {
            case .sent:
                glassdHas = stale ? nil : sent
            case .glassdAway:
                glassdHas = nil
                glassdPresent = false
                effects.append(.checkGlassd)
            case .refused(let error):
                // Not tried again until the event changes: a refusal would only repeat.
                glassdHas = sent
                let hint = authorizationHint(error).map { " (\($0))" } ?? ""
                effects.append(.log("glassd refused the next calendar event: \(error.name): \(error.message)\(hint)"))
            }
        default:
            return []
        }
        sendIfNeeded(&effects)
        return effects
    }

    private mutating func sendIfNeeded(_ effects: inout [AgentEffect]) {
        guard let current else { return }
        if dryRun {
            if reported != .some(current) { effects.append(.reportEvent(current)) }
            reported = .some(current)
            return
        }
        guard glassdPresent, inFlight == nil, glassdHas != .some(current) else { return }
        inFlight = .some(current)
        effects.append(.sendEvent(current))
    }

    /// When to read again: when the event ends, or at the next local midnight if that is sooner.
    func wake(after now: Date, _ next: NextEvent?) -> Date {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let midnight = calendar.date(byAdding: .day, value: 1, to: calendar.startOfDay(for: now)) ?? now.addingTimeInterval(86_400)
        guard let end = next?.end, end > now else { return midnight }
        return min(end, midnight)
    }
}
