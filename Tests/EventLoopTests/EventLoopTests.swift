// SPDX-License-Identifier: GPL-2.0-or-later
import Concurrency
@testable import EventLoop
import Foundation
import Glibc
import Synchronization
import Testing

/// Test work isolated to a loop: its sources, its timers, and what their handlers logged.
private actor LoopProbe {
    nonisolated let loop: EventLoop
    nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }
    private var sources: [String: LoopIO] = [:]
    private var timers: [String: LoopTimer] = [:]
    private(set) var log: [String] = []

    init(_ loop: EventLoop) { self.loop = loop }

    /// Waits on `fd`: each readiness logs `name`, removes the sources named in `removing` (its own
    /// included, if named), and fires `fired`. The descriptor is never read, so it stays ready.
    func watch(_ name: String, fd: Int32, events: IOEvents = .readable, removing: [String] = [], fired: OneShotEvent) throws {
        sources[name] = try LoopIO(loop, fd: fd, events: events, purpose: "a test") { [unowned self] revents in
            log.append("\(name) \(revents.rawValue)")
            for other in removing { sources.removeValue(forKey: other)?.remove() }
            fired.fire()
        }
    }

    /// `watch` for each, all in one turn of the loop: they are ready in the same round.
    func watchAll(_ watched: [(name: String, fd: Int32)], removing: [String], fired: OneShotEvent) throws {
        for (name, fd) in watched { try watch(name, fd: fd, removing: removing, fired: fired) }
    }

    func setEvents(_ name: String, _ events: IOEvents) { sources[name]?.events = events }

    func removeAll() {
        sources.removeAll()
        timers.removeAll()
    }

    func schedule(_ name: String, after delay: Duration, fired: OneShotEvent? = nil) throws {
        let timer = timers[name] ?? LoopTimer(loop, purpose: "a test") { [unowned self] in
            log.append(name)
            fired?.fire()
        }
        timers[name] = timer
        try timer.schedule(after: delay)
    }

    func cancel(_ name: String) { timers[name]?.cancel() }

    /// Schedules (nil: cancels) each in turn, all in one turn of the loop: relative to one "now".
    func plan(_ steps: [(name: String, delay: Duration?)], lastFired: OneShotEvent) throws {
        for (name, delay) in steps {
            if let delay { try schedule(name, after: delay, fired: name == steps.last?.name ? lastFired : nil) } else { cancel(name) }
        }
    }

    func append(_ entry: String) { log.append(entry) }

    /// Whether this runs on the loop's thread (the actor's executor is the loop).
    func onLoopThread() -> Bool { loop.isOnLoopThread }
}

@Suite("Event loop", .serialized, .timeLimit(.minutes(2)))
struct EventLoopTests {
    /// Waits for `event`: a guard against a hang, not a timing assertion.
    private func waitFor(_ event: OneShotEvent, _ what: String) async throws {
        do {
            try await withDeadline(after: .seconds(30), on: ContinuousClock()) {
                await event.wait()
                try Task.checkCancellation()
            }
        } catch is DeadlinePassed {
            Issue.record("\(what) did not happen within 30 s")
            throw DeadlinePassed()
        }
    }

    private func pipePair() throws -> (read: Int32, write: Int32) {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw POSIXError(.EMFILE) }
        return (ends[0], ends[1])
    }

    private func stop(_ loop: EventLoop) async throws {
        loop.stop()
        try await waitFor(loop.exited, "the loop's exit")
    }

    @Test("an actor on the loop runs on its thread, named as asked")
    func executor() async throws {
        let loop = try EventLoop(name: "test-loop")
        let probe = LoopProbe(loop)
        #expect(await probe.onLoopThread())
        #expect(!loop.isOnLoopThread)
        let name = Mutex<String?>(nil)
        let done = OneShotEvent()
        loop.post {
            name.withLock { $0 = Thread.current.name }
            done.fire()
        }
        try await waitFor(done, "the posted closure")
        #expect(name.withLock { $0 } == "test-loop")
        try await stop(loop)
    }

    @Test("a readable descriptor runs its handler with what it reported; a source waiting for nothing does not run")
    func readiness() async throws {
        let loop = try EventLoop(name: "test-loop")
        let probe = LoopProbe(loop)
        let (r, w) = try pipePair()
        defer { close(r); close(w) }
        let fired = OneShotEvent()
        try await probe.watch("pipe", fd: r, fired: fired)
        await probe.setEvents("pipe", [])
        var byte: UInt8 = 1
        #expect(write(w, &byte, 1) == 1)
        // A round trip through the loop after the write: the disabled source was not dispatched.
        let (r2, w2) = try pipePair()
        defer { close(r2); close(w2) }
        let other = OneShotEvent()
        try await probe.watch("other", fd: r2, removing: ["other"], fired: other)
        #expect(write(w2, &byte, 1) == 1)
        try await waitFor(other, "the second pipe's readiness")
        #expect(await probe.log == ["other 1"])
        await probe.setEvents("pipe", .readable)
        try await waitFor(fired, "the pipe's readiness")
        await probe.removeAll()
        #expect(await probe.log.prefix(2) == ["other 1", "pipe 1"])
        try await stop(loop)
    }

    @Test("a handler that removes another source ready in the same round, and itself: neither runs again")
    func removalWhileDispatching() async throws {
        let loop = try EventLoop(name: "test-loop")
        let probe = LoopProbe(loop)
        let (ra, wa) = try pipePair()
        let (rb, wb) = try pipePair()
        defer { for fd in [ra, wa, rb, wb] { close(fd) } }
        var byte: UInt8 = 1
        // Both readable before either is watched: both are ready in the loop's first round.
        #expect(write(wa, &byte, 1) == 1)
        #expect(write(wb, &byte, 1) == 1)
        let fired = OneShotEvent()
        try await probe.watchAll([("a", ra), ("b", rb)], removing: ["a", "b"], fired: fired)
        try await waitFor(fired, "a pipe's readiness")
        // Level-triggered and never read: a source still there would run in every later round.
        // Two timer rounds later, exactly one handler has run, once.
        let first = OneShotEvent()
        try await probe.schedule("first", after: .zero, fired: first)
        try await waitFor(first, "the first timer")
        let second = OneShotEvent()
        try await probe.schedule("second", after: .zero, fired: second)
        try await waitFor(second, "the second timer")
        let log = await probe.log
        #expect(log.count == 3 && (log[0] == "a 1" || log[0] == "b 1") && log[1...] == ["first", "second"], "\(log)")
        await probe.removeAll()
        try await stop(loop)
    }

    @Test("timers fire in the order of their times; a cancelled one does not fire; a rescheduled one fires once, at its new time")
    func timers() async throws {
        let loop = try EventLoop(name: "test-loop")
        let probe = LoopProbe(loop)
        let last = OneShotEvent()
        try await probe.plan(
            [
                ("cancelled", .milliseconds(1)), ("cancelled", nil), ("early", .milliseconds(20)), ("moved", .milliseconds(5)),
                ("moved", .milliseconds(100)), ("late", .milliseconds(200)),
            ], lastFired: last)
        try await waitFor(last, "the last timer")
        #expect(await probe.log == ["early", "moved", "late"])
        await probe.removeAll()
        try await stop(loop)
    }

    @Test("posted closures and actor jobs run in the order they were sent")
    func postOrdering() async throws {
        let loop = try EventLoop(name: "test-loop")
        let probe = LoopProbe(loop)
        let done = OneShotEvent()
        let order = Mutex<[Int]>([])
        for i in 0..<1000 {
            loop.post {
                order.withLock { $0.append(i) }
                if i == 999 { done.fire() }
            }
        }
        try await waitFor(done, "the last posted closure")
        #expect(order.withLock { $0 } == Array(0..<1000))
        for i in 0..<100 { await probe.append("\(i)") }
        #expect(await probe.log == (0..<100).map { "\($0)" })
        try await stop(loop)
    }

    @Test("work posted without pause starves no descriptor: a ready one is served within a few rounds")
    func noStarvation() async throws {
        let loop = try EventLoop(name: "test-loop")
        let probe = LoopProbe(loop)
        let (r, w) = try pipePair()
        defer { close(r); close(w) }
        let fired = OneShotEvent()
        try await probe.watch("pipe", fd: r, removing: ["pipe"], fired: fired)
        // A chain of closures, each posting the next: the queue is never empty for long. It stops
        // when the pipe's handler has run (or after a bound, so a starved pipe ends the test).
        let rounds = Atomic<Int>(0)
        let roundsWhenServed = Atomic<Int>(-1)
        @Sendable func chain() {
            let round = rounds.add(1, ordering: .relaxed).newValue
            if fired.hasFired {
                roundsWhenServed.store(round, ordering: .relaxed)
            } else if round < 100_000 {
                loop.post { chain() }
            }
        }
        let stopped = OneShotEvent()
        loop.post {
            var byte: UInt8 = 1
            _ = write(w, &byte, 1)
            chain()
        }
        try await waitFor(fired, "the pipe's readiness")
        loop.post { stopped.fire() }
        try await waitFor(stopped, "the chain's end")
        let served = roundsWhenServed.load(ordering: .relaxed)
        #expect(served >= 0 && served < 100, "the pipe was served after \(rounds.load(ordering: .relaxed)) rounds of posted work")
        await probe.removeAll()
        try await stop(loop)
    }

    /// A stand-in for a descriptor-making call that fails as it does at RLIMIT_NOFILE.
    private static func noDescriptors() -> Int32 {
        errno = EMFILE
        return -1
    }

    @Test("no eventfd, no sd_event or no thread: a ResourceError naming it, and the wake-up descriptor closed")
    func resourceFailures() throws {
        #expect(throws: ResourceError(call: "eventfd", purpose: "the event loop's wake-up", errno: EMFILE)) {
            try EventLoop(name: "test-loop", makeWakeFD: Self.noDescriptors)
        }
        // The wake-up descriptor stood in for by a pipe's only write end: once the loop closes
        // it, the read end reads EOF (a count of open descriptors would see other suites' too).
        for failure in ["sd_event_new", "pthread_create"] {
            let (r, w) = try pipePair()
            defer { close(r) }
            #expect(throws: ResourceError.self) {
                if failure == "sd_event_new" {
                    try EventLoop(name: "test-loop", makeWakeFD: { w }, makeEvent: { _ in -ENOMEM })
                } else {
                    try EventLoop(name: "test-loop", makeWakeFD: { w }, threads: ThreadCreator { _, _ in EAGAIN })
                }
            }
            var entry = pollfd(fd: r, events: Int16(POLLIN), revents: 0)
            var byte: UInt8 = 0
            #expect(poll(&entry, 1, 0) == 1 && read(r, &byte, 1) == 0, "\(failure): the wake-up descriptor was left open")
        }
        #expect(throws: ResourceError(call: "sd_event_new", purpose: "the event loop", errno: ENOMEM)) {
            try EventLoop(name: "test-loop", makeEvent: { _ in -ENOMEM })
        }
        #expect(throws: ResourceError(call: "pthread_create", purpose: "the event loop", errno: EAGAIN)) {
            try EventLoop(name: "test-loop", threads: ThreadCreator { _, _ in EAGAIN })
        }
        let error = ResourceError(call: "eventfd", purpose: "the event loop's wake-up", errno: EMFILE)
        #expect(error.description == "eventfd for the event loop's wake-up failed: Too many open files")
    }

    @Test("the shared loop is one loop, started once")
    func shared() throws {
        let a = try EventLoop.shared()
        let b = try EventLoop.shared()
        #expect(a === b)
    }
}
