// SPDX-License-Identifier: GPL-2.0-or-later

/// Says a repeated event (a malformed frame from the glasses, say) the first time for each kind,
/// then at most once per `interval` per kind, with how many went unsaid: broken or hostile input
/// at full rate must not flood the journal. At most `maxKinds` kinds are tracked.
public struct LogThrottle<C: Clock> where C.Duration == Duration {
    public let clock: C
    public let interval: Duration
    public let maxKinds: Int
    private var kinds: [String: (said: C.Instant, unsaid: Int)] = [:]

    public init(clock: C, interval: Duration = .seconds(30), maxKinds: Int = 64) {
        self.clock = clock
        self.interval = interval
        self.maxKinds = maxKinds
    }

    /// nil: stay quiet this time; else say it, noting how many of this kind were not said since.
    public mutating func admit(_ kind: String) -> Int? {
        let now = clock.now
        if var seen = kinds[kind] {
            guard seen.said.duration(to: now) >= interval else {
                seen.unsaid += 1
                kinds[kind] = seen
                return nil
            }
            kinds[kind] = (now, 0)
            return seen.unsaid
        }
        // A new kind beyond the bound is folded into one so the table stays small.
        let key = kinds.count >= maxKinds ? "other" : kind
        if key != kind { return admit(key) }
        kinds[kind] = (now, 0)
        return 0
    }
}
