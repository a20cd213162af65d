// SPDX-License-Identifier: GPL-2.0-or-later
import Glasses
import Testing
import TestSupport

@Suite("LogThrottle", .timeLimit(.minutes(5)))
struct LogThrottleTests {
    @Test("each kind is said the first time, then once per interval with the count not said; the table stays bounded")
    func throttle() {
        let clock = ManualClock()
        var throttle = LogThrottle(clock: clock, interval: .seconds(30), maxKinds: 3)
        #expect(throttle.admit("unknown") == 0)
        #expect(throttle.admit("short") == 0)
        for _ in 0..<1000 { #expect(throttle.admit("unknown") == nil) }
        clock.advance(by: .seconds(29))
        #expect(throttle.admit("unknown") == nil)
        clock.advance(by: .seconds(1))
        #expect(throttle.admit("unknown") == 1001)
        #expect(throttle.admit("unknown") == nil)
        // Kinds beyond the bound share one entry.
        #expect(throttle.admit("third") == 0)
        #expect(throttle.admit("fourth") == 0)
        #expect(throttle.admit("fifth") == nil)
    }
}
