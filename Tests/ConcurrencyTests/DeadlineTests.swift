// SPDX-License-Identifier: GPL-2.0-or-later
import Concurrency
import Synchronization
import Testing
import TestSupport

@Suite("withDeadline", .timeLimit(.minutes(5)))
struct DeadlineTests {
    struct Refused: Error, Equatable {}

    @Test("work done before the deadline: its value, without the clock moving (the timer was stopped)")
    func inTime() async throws {
        let clock = ManualClock()
        let value = try await withDeadline(after: .seconds(5), on: clock) { 42 }
        #expect(value == 42)
    }

    @Test("the deadline first: the work is cancelled and awaited, and DeadlinePassed is thrown")
    func late() async throws {
        let clock = ManualClock()
        let pulse = Pulse()
        let stopped = OneShotEvent()
        let task = Task {
            try await withDeadline(after: .seconds(5), on: clock) {
                await pulse.wait(after: pulse.ticket())
                stopped.fire()
                try Task.checkCancellation()
                return 1
            }
        }
        await clock.sleeping(1)
        clock.advance(by: .seconds(5))
        await #expect(throws: DeadlinePassed()) { try await task.value }
        #expect(stopped.hasFired)
    }

    @Test("the work's own error before the deadline is thrown as it is")
    func workFails() async throws {
        let clock = ManualClock()
        await #expect(throws: Refused()) {
            try await withDeadline(after: .seconds(5), on: clock) { () async throws -> Int in throw Refused() }
        }
    }

    @Test("a value the work returns after the deadline cancelled it is kept, never dropped")
    func valueAfterCancel() async throws {
        let clock = ManualClock()
        let pulse = Pulse()
        let task = Task {
            try await withDeadline(after: .seconds(5), on: clock) {
                await pulse.wait(after: pulse.ticket())  // returns when cancelled
                return 7
            }
        }
        await clock.sleeping(1)
        clock.advance(by: .seconds(5))
        #expect(try await task.value == 7)
    }

    @Test("a cancelled caller gets the work's CancellationError, not DeadlinePassed")
    func callerCancelled() async throws {
        let clock = ManualClock()
        let task = Task {
            try await withDeadline(after: .seconds(5), on: clock) {
                await Pulse().wait(after: 0)
                try Task.checkCancellation()
            }
        }
        await clock.sleeping(1)
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
    }
}
