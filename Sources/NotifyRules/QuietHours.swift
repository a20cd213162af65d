// SPDX-License-Identifier: GPL-2.0-or-later

/// A daily span of local time in which only critical notifications come through. It may run
/// across midnight (22:00 to 07:00).
public struct QuietHours: Sendable, Equatable, CustomStringConvertible {
    /// Minutes after midnight: from `start` (included) to `end` (excluded).
    public var start: Int
    public var end: Int

    public init(start: Int, end: Int) {
        self.start = start
        self.end = end
    }

    /// Whether `minute` (after midnight, local time) is inside.
    public func contains(minuteOfDay minute: Int) -> Bool {
        start < end ? (start <= minute && minute < end) : (minute >= start || minute < end)
    }

    /// "HH:MM" (00:00 to 23:59) as minutes after midnight; nil for anything else.
    public static func minutes(_ text: String) -> Int? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, parts.allSatisfy({ $0.count == 2 && $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }),
            let hours = Int(parts[0]), let minutes = Int(parts[1]), hours < 24, minutes < 60
        else { return nil }
        return hours * 60 + minutes
    }

    public var description: String { "\(Self.clock(start))-\(Self.clock(end))" }

    static func clock(_ minutes: Int) -> String {
        let h = minutes / 60, m = minutes % 60
        return (h < 10 ? "0" : "") + "\(h):" + (m < 10 ? "0" : "") + "\(m)"
    }
}
