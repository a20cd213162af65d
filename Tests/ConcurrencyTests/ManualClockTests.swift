// SPDX-License-Identifier: GPL-2.0-or-later
import Testing
import TestSupport

/// The manual clock's waits for sleepers end when their task is cancelled (a timed-out test's
/// tasks are): before, they went round their loop for ever and kept the test process spinning.
@Suite("The manual clock's waits", .timeLimit(.minutes(1)))
struct ManualClockTests {
    @Test("waiting for sleepers that never come returns once cancelled")
    func sleepingCancelled() async {
        let clock = ManualClock()
        let waiter = Task {
            await clock.sleeping(3)
            return Task.isCancelled
        }
        waiter.cancel()
        #expect(await waiter.value, "it returned for the cancellation, with no sleeper")
    }

    @Test("waiting for a deadline that never comes returns the present once cancelled")
    func deadlineCancelled() async {
        let clock = ManualClock()
        let waiter = Task { await clock.nextDeadline(within: .seconds(1)) }
        waiter.cancel()
        #expect(await waiter.value == clock.now)
    }

    @Test("a sleeper still wakes the waiter")
    func sleeper() async throws {
        let clock = ManualClock()
        async let slept: Void = clock.sleep(until: clock.now.advanced(by: .seconds(2)), tolerance: nil)
        #expect(await clock.nextDeadline(within: .seconds(5)) == clock.now.advanced(by: .seconds(2)))
        await clock.sleeping(1)
        clock.advance(by: .seconds(2))
        try await slept
    }
}
