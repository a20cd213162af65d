// SPDX-License-Identifier: GPL-2.0-or-later
import Concurrency
import LinkKit
import Synchronization
import Testing
import TestSupport

/// Glasses in memory: present or not, refusing or not, an adapter on or off. Every call is logged.
final class FakeRadio: LinkRadio {
    struct Connection: Sendable, Equatable { var number: Int }
    struct Absent: Error {}
    struct Refused: Error {}

    struct World {
        var present = true
        var refuses = false
        var adapterOn = true
        var log: [String] = []
        var connections = 0
        var linkUp = false
    }

    let world = Mutex(World())
    let changed = Pulse()

    func update(_ change: (inout World) -> Void) {
        world.withLock { change(&$0) }
        changed.pulse()
    }

    var log: [String] { world.withLock { $0.log } }

    private func wait(until condition: (World) -> Bool) async throws {
        while true {
            let ticket = changed.ticket()
            if world.withLock({ condition($0) }) { return }
            await changed.wait(after: ticket)
            try Task.checkCancellation()
        }
    }

    func adapterReady() async throws {
        let off = world.withLock { w in
            if !w.adapterOn { w.log.append("adapter-wait") }
            return !w.adapterOn
        }
        if off { changed.pulse() }
        try await wait { $0.adapterOn }
    }

    func connect(_ address: BluetoothAddress) async throws -> Connection {
        let outcome = world.withLock { w -> Result<Connection, any Error> in
            w.log.append("connect")
            if !w.adapterOn || !w.present { return .failure(Absent()) }
            if w.refuses { return .failure(Refused()) }
            w.connections += 1
            w.linkUp = true
            return .success(Connection(number: w.connections))
        }
        changed.pulse()
        return try outcome.get()
    }

    /// Holds a connection until the test drops it, or nil when the loop is stopped.
    func hold() async -> LinkEnd? {
        do {
            try await wait { !$0.linkUp }
            return .dropped("dropped")
        } catch {
            return nil
        }
    }

    /// Waits until `count` connections were made.
    func connections(_ count: Int) async throws {
        try await wait { $0.connections >= count }
    }

    func seen(_ address: BluetoothAddress) async throws {
        world.withLock { $0.log.append("watch") }
        changed.pulse()
        try await wait { $0.present && $0.adapterOn }
    }
}

@Suite("Reconnect loop", .timeLimit(.minutes(5)))
struct ReconnectLoopTests {
    typealias Loop = ReconnectLoop<FakeRadio, ManualClock>
    let address = BluetoothAddress("00:00:00:00:00:02")!
    let policy = ReconnectPolicy(floor: .seconds(1), maximum: .seconds(8), rewatch: .seconds(3600))

    private func start(_ radio: FakeRadio, _ clock: ManualClock) -> Task<Void, Never> {
        let loop = Loop(radio: radio, clock: clock, policy: policy)
        let address = self.address
        return Task { await loop.run(address, observe: { _ in }) { _ in await radio.hold() } }
    }

    @Test("the pause before an attempt: only repeated failures wait, doubling from the floor to the cap")
    func pauses() {
        #expect(policy.pause(afterFailures: 0) == .zero)
        #expect(policy.pause(afterFailures: 1) == .zero)
        #expect((2...7).map { policy.pause(afterFailures: $0) } == [1, 2, 4, 8, 8, 8].map { Duration.seconds($0) })
    }

    @Test("a flapping link: every drop reconnects without watching; one that drops at once waits out the floor")
    func flapping() async throws {
        let radio = FakeRadio()
        let clock = ManualClock()
        let task = start(radio, clock)
        try await radio.connections(1)
        // Dropped at once: the next attempt waits for the floor (1 s after the last one began).
        radio.update { $0.linkUp = false }
        let floor = await clock.nextDeadline(within: .seconds(10))
        #expect(clock.now.duration(to: floor) == .seconds(1))
        #expect(radio.world.withLock { $0.connections } == 1)
        clock.advance(to: floor)
        try await radio.connections(2)
        // Held for 5 s, then dropped: the next attempt is at once (no clock needed).
        clock.advance(by: .seconds(5))
        for n in 3...10 {
            radio.update { $0.linkUp = false }
            try await radio.connections(n)
            clock.advance(by: .seconds(2))
        }
        #expect(!radio.log.contains("watch"))
        task.cancel()
        await task.value
    }

    @Test("a long absence: it watches instead of sleeping, and connects as soon as the glasses are seen")
    func absence() async throws {
        let radio = FakeRadio()
        radio.update { $0.present = false }
        let clock = ManualClock()
        let task = start(radio, clock)
        // It fails once, then watches: nothing sleeps but the rewatch guard.
        await clock.sleeping()
        #expect(radio.log == ["connect", "watch"])
        clock.advance(by: .seconds(90))
        radio.update { $0.present = true }
        try await radio.connections(1)
        #expect(radio.log == ["connect", "watch", "connect"])
        task.cancel()
        await task.value
    }

    @Test("away through several rewatches: once seen, tried at once (the pauses were served while away)")
    func awayLong() async throws {
        let radio = FakeRadio()
        radio.update { $0.present = false }
        let clock = ManualClock()
        let loop = Loop(radio: radio, clock: clock, policy: ReconnectPolicy(floor: .seconds(1), maximum: .seconds(8), rewatch: .seconds(10)))
        let address = self.address
        let task = Task { await loop.run(address, observe: { _ in }) { _ in await radio.hold() } }
        // Let the rewatch guard and the pauses run for a while: attempts keep failing.
        while radio.log.filter({ $0 == "connect" }).count < 5 {
            clock.advance(to: await clock.nextDeadline(within: .seconds(60)))
        }
        // On to the next watch: the pause after the fifth failure is served while away.
        while true {
            let deadline = await clock.nextDeadline(within: .seconds(60))
            if radio.log.last == "watch" { break }
            clock.advance(to: deadline)
        }
        radio.update { $0.present = true }
        try await radio.connections(1)
        task.cancel()
        await task.value
    }

    @Test("glasses in sight that refuse: attempts are paced, doubling from the floor to the cap")
    func refusing() async throws {
        let radio = FakeRadio()
        radio.update { $0.refuses = true }
        let clock = ManualClock()
        let task = start(radio, clock)
        var times: [Duration] = [.zero]
        var attempts = 1
        while times.count < 7 {
            clock.advance(to: await clock.nextDeadline(within: .seconds(60)))
            // Asleep again: whatever that woke it for is done.
            _ = await clock.nextDeadline(within: .seconds(60))
            let now = radio.log.filter { $0 == "connect" }.count
            if now > attempts {
                times.append(clock.now.offset)
                attempts = now
            }
        }
        #expect(times == [0, 1, 2, 4, 8, 16, 24].map { Duration.seconds($0) })
        task.cancel()
        await task.value
    }

    @Test("adapter off and on (or bluetoothd away and back): it waits for the adapter, then for the glasses")
    func adapterCycle() async throws {
        let radio = FakeRadio()
        let clock = ManualClock()
        let task = start(radio, clock)
        try await radio.connections(1)
        clock.advance(by: .seconds(10))
        radio.update {
            $0.adapterOn = false
            $0.linkUp = false
        }
        // It waits for the adapter (no attempt, no clock), then reconnects at once.
        while !radio.log.contains("adapter-wait") {
            let ticket = radio.changed.ticket()
            if radio.log.contains("adapter-wait") { break }
            await radio.changed.wait(after: ticket)
        }
        radio.update { $0.adapterOn = true }
        try await radio.connections(2)
        #expect(radio.log == ["connect", "adapter-wait", "connect"])
        // Off while it tries: that attempt fails, so it waits for the adapter, then watches.
        clock.advance(by: .seconds(10))
        radio.update {
            $0.present = false
            $0.linkUp = false
        }
        await clock.sleeping()  // watching (the rewatch guard sleeps)
        radio.update { $0.present = true }
        // Seen at once: only the floor since the failed attempt is left to wait.
        let floor = await clock.nextDeadline(within: .seconds(60))
        #expect(clock.now.duration(to: floor) == .seconds(1))
        clock.advance(to: floor)
        try await radio.connections(3)
        #expect(radio.log.suffix(3) == ["connect", "watch", "connect"])
        task.cancel()
        await task.value
    }

    @Test("unpair while it waits (for the glasses, or out a pause): it stops at once")
    func stopsAtOnce() async throws {
        let radio = FakeRadio()
        radio.update { $0.present = false }
        let clock = ManualClock()
        let watching = start(radio, clock)
        await clock.sleeping()
        watching.cancel()
        await watching.value
        let refusing = FakeRadio()
        refusing.update { $0.refuses = true }
        let pausing = start(refusing, clock)
        _ = await clock.nextDeadline(within: .seconds(60))
        pausing.cancel()
        await pausing.value
    }
}
