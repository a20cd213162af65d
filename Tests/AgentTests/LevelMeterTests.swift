// SPDX-License-Identifier: GPL-2.0-or-later
import Agent
import TestSupport
import Testing

@Suite("Level meter", .timeLimit(.minutes(5)))
struct LevelMeterTests {
    /// #require cannot take a mutating call.
    private func level(_ value: Double?) -> Double? { value }

    @Test("full scale reads 0 dBFS, half scale about -6, silence the floor")
    func levels() throws {
        var meter = LevelMeter<ManualClock>()
        let full = try #require(level(meter.add([Int16](repeating: -32768, count: 160), at: Time.at(0))))
        #expect(full == 0)
        let half = try #require(level(meter.add([Int16](repeating: 16384, count: 160), at: Time.at(100))))
        #expect(abs(half - -6.02) < 0.01)
        let silence = try #require(level(meter.add([Int16](repeating: 0, count: 160), at: Time.at(200))))
        #expect(silence == -100)
        let one = try #require(level(meter.add([1, -1], at: Time.at(300))))
        #expect(abs(one - -90.31) < 0.01)
    }

    @Test("at most once per interval, over everything since the last reading")
    func interval() throws {
        var meter = LevelMeter<ManualClock>(interval: .milliseconds(100))
        #expect(meter.add([], at: Time.at(0)) == nil)  // nothing heard yet
        #expect(meter.add([0, 0], at: Time.at(0)) == -100)
        #expect(meter.add([Int16](repeating: 32767, count: 100), at: Time.at(40)) == nil)
        #expect(meter.add([Int16](repeating: 0, count: 300), at: Time.at(80)) == nil)
        // The 400 samples since the last reading: a quarter at full scale is -6 dB.
        let quarter = try #require(level(meter.add([], at: Time.at(100))))
        #expect(abs(quarter - -6.02) < 0.01)
        #expect(meter.add([5], at: Time.at(150)) == nil)
    }
}
