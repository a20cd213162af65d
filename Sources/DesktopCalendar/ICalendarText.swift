// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation

/// One content line of iCalendar text (RFC 5545 3.1), unfolded: `NAME;PARAM=VALUE:value`.
struct ICalLine: Equatable {
    /// Upper-cased.
    var name: String
    /// Parameter names upper-cased, quotes removed; a list parameter keeps its commas.
    var parameters: [String: String]
    var value: String
}

/// A DATE or DATE-TIME value: the instant, whether it is a whole day, and the zone its wall clock
/// is in (for recurrence: "every day at 09:00" stays 09:00 across a change of summer time).
struct ICalTime: Equatable {
    var date: Date
    var allDay: Bool
    var zone: TimeZone
}

/// A DURATION value, as nominal days (calendar days, DST-proof) and exact seconds.
struct ICalDuration: Equatable {
    var days: Int
    var seconds: Int
}

/// The lexical layer of iCalendar: lines, parameters, times, durations, text. Never traps: what
/// cannot be read is nil.
enum ICalendarText {
    /// The longest text read at all; beyond it, the rest is ignored.
    static let maxBytes = 4 << 20

    /// The unfolded content lines of `text`: a line break followed by a space or a tab continues
    /// the line (CRLF or LF). Lines that are not `NAME[;PARAM=...]:value` are skipped.
    static func lines(_ text: String) -> [ICalLine] {
        var lines: [ICalLine] = []
        var current: [UInt8] = []
        var afterBreak = false
        func flush() {
            if !current.isEmpty, let line = parse(current) { lines.append(line) }
            current.removeAll(keepingCapacity: true)
        }
        for byte in text.utf8.prefix(maxBytes) {
            if afterBreak {
                afterBreak = false
                if byte == 0x20 || byte == 0x09 { continue }  // folded: the same line goes on
                flush()
            }
            if byte == 0x0A {
                if current.last == 0x0D { current.removeLast() }
                afterBreak = true
                continue
            }
            current.append(byte)
        }
        flush()
        return lines
    }

    /// One unfolded line; nil when it is not a content line.
    static func parse(_ raw: [UInt8]) -> ICalLine? {
        let colon = UInt8(ascii: ":"), semicolon = UInt8(ascii: ";"), equals = UInt8(ascii: "=")
        let quote = UInt8(ascii: "\""), comma = UInt8(ascii: ",")
        func text(_ range: Range<Int>) -> String { String(decoding: raw[range], as: UTF8.self) }
        var i = 0
        while i < raw.count, raw[i] != semicolon, raw[i] != colon { i += 1 }
        guard i < raw.count, i > 0 else { return nil }
        let name = text(0..<i).uppercased()
        var parameters: [String: String] = [:]
        while i < raw.count, raw[i] == semicolon {
            i += 1
            let nameStart = i
            while i < raw.count, raw[i] != equals, raw[i] != colon, raw[i] != semicolon { i += 1 }
            guard i < raw.count, raw[i] == equals, i > nameStart else { return nil }
            let parameter = text(nameStart..<i).uppercased()
            i += 1
            var values: [String] = []
            while true {
                if i < raw.count, raw[i] == quote {
                    let start = i + 1
                    i = start
                    while i < raw.count, raw[i] != quote { i += 1 }
                    guard i < raw.count else { return nil }
                    values.append(text(start..<i))
                    i += 1
                } else {
                    let start = i
                    while i < raw.count, raw[i] != comma, raw[i] != semicolon, raw[i] != colon { i += 1 }
                    values.append(text(start..<i))
                }
                guard i < raw.count, raw[i] == comma else { break }
                i += 1
            }
            if parameters[parameter] == nil { parameters[parameter] = values.joined(separator: ",") }
        }
        guard i < raw.count, raw[i] == colon else { return nil }
        return ICalLine(name: name, parameters: parameters, value: text((i + 1)..<raw.count))
    }

    /// A TEXT value with its escapes undone: `\\`, `\;`, `\,`, `\n` (or `\N`: a line break).
    static func text(_ value: String) -> String {
        var out = String.UnicodeScalarView()
        var escaped = false
        for c in value.unicodeScalars {
            if escaped {
                out.append(c == "n" || c == "N" ? "\n" : c)
                escaped = false
            } else if c == "\\" {
                escaped = true
            } else {
                out.append(c)
            }
        }
        if escaped { out.append("\\") }
        return String(out)
    }

    /// A gregorian calendar in `zone`.
    static func calendar(_ zone: TimeZone) -> Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        return calendar
    }

    /// The zone a TZID names: an Olson name, or one behind a prefix (libical's
    /// "/freeassociation.sourceforge.net/Europe/Berlin"); nil for any other (a Windows name).
    static func zone(_ tzid: String) -> TimeZone? {
        guard !tzid.isEmpty, tzid.utf8.count <= 200 else { return nil }
        if let zone = TimeZone(identifier: tzid) { return zone }
        let parts = tzid.split(separator: "/")
        for length in stride(from: min(3, parts.count - 1), through: 2, by: -1) {
            if let zone = TimeZone(identifier: parts.suffix(length).joined(separator: "/")) { return zone }
        }
        return nil
    }

    /// A DATE (`YYYYMMDD`: a whole day, from local midnight) or DATE-TIME (`YYYYMMDDTHHMMSS`,
    /// with `Z` in UTC, else in its TZID's zone, else floating: local; an unknown TZID: local).
    static func time(_ value: String, parameters: [String: String], local: TimeZone) -> ICalTime? {
        let digits = Array(value.utf8)
        func number(_ range: Range<Int>) -> Int? {
            var n = 0
            for i in range {
                guard i < digits.count, digits[i] >= 0x30, digits[i] <= 0x39 else { return nil }
                n = n * 10 + Int(digits[i] - 0x30)
            }
            return n
        }
        guard let year = number(0..<4), let month = number(4..<6), let day = number(6..<8) else { return nil }
        guard (1900...2500).contains(year), (1...12).contains(month), (1...31).contains(day) else { return nil }
        var parts = DateComponents(year: year, month: month, day: day, hour: 0, minute: 0, second: 0)
        let allDay: Bool
        var zone = local
        if digits.count == 8 {
            allDay = true
        } else {
            guard parameters["VALUE"].map({ $0.uppercased() }) != "DATE" else { return nil }
            guard digits.count == 15 || (digits.count == 16 && digits[15] == UInt8(ascii: "Z")), digits[8] == UInt8(ascii: "T"),
                let hour = number(9..<11), let minute = number(11..<13), let second = number(13..<15),
                hour < 24, minute < 60, second <= 60
            else { return nil }
            allDay = false
            parts.hour = hour
            parts.minute = minute
            parts.second = min(second, 59)
            if digits.count == 16 {
                zone = TimeZone(identifier: "UTC") ?? local
            } else if let tzid = parameters["TZID"], let named = Self.zone(tzid) {
                zone = named
            }
        }
        let calendar = Self.calendar(zone)
        guard let date = calendar.date(from: parts) else { return nil }
        // No 31 February: the date must be the one written.
        let back = calendar.dateComponents([.year, .month, .day], from: date)
        guard back.year == year, back.month == month, back.day == day else { return nil }
        return ICalTime(date: date, allDay: allDay, zone: zone)
    }

    /// A comma-separated list of times (EXDATE), the unreadable ones left out.
    static func times(_ value: String, parameters: [String: String], local: TimeZone) -> [ICalTime] {
        value.split(separator: ",").compactMap { time(String($0), parameters: parameters, local: local) }
    }

    /// A DURATION: `[+-]P[nW][nD][T[nH][nM][nS]]`; nil when malformed or beyond ten years.
    static func duration(_ value: String) -> ICalDuration? {
        var chars = Substring(value)
        var sign = 1
        if chars.first == "-" || chars.first == "+" {
            if chars.first == "-" { sign = -1 }
            chars = chars.dropFirst()
        }
        guard chars.first == "P" else { return nil }
        chars = chars.dropFirst()
        var days = 0, seconds = 0, number = "", inTime = false, any = false
        for c in chars {
            if c.isASCII, c.isNumber {
                number.append(c)
                guard number.count <= 7 else { return nil }
                continue
            }
            if c == "T", number.isEmpty, !inTime {
                inTime = true
                continue
            }
            guard let n = Int(number) else { return nil }
            number = ""
            any = true
            switch (c, inTime) {
            case ("W", false): days += n * 7
            case ("D", false): days += n
            case ("H", true): seconds += n * 3600
            case ("M", true): seconds += n * 60
            case ("S", true): seconds += n
            default: return nil
            }
        }
        guard number.isEmpty, any, days + seconds / 86400 <= 3660 else { return nil }
        return ICalDuration(days: sign * days, seconds: sign * seconds)
    }
}
