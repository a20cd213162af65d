// SPDX-License-Identifier: GPL-2.0-or-later
import Glasses
import Testing
import TestSupport

@Suite("Pacing audio into the speaker's buffer", .timeLimit(.minutes(5)))
struct SpeakerPacerTests {
    typealias Pacer = SpeakerPacer<ManualClock>
    typealias Instant = ManualClock.Instant

    /// The device as the firmware works, written apart from the pacer: an 8 KB ring drained in
    /// 10 ms blocks from the first byte on; a write that does not fit is dropped whole.
    struct Device {
        let rate: Int
        var ring = 0
        var clock = Duration.zero
        var streaming = false
        var rejected = 0
        var silenceBlocks = 0
        var played = 0

        mutating func run(until t: Duration) {
            let block = rate / 100
            while streaming, clock + .milliseconds(10) <= t {
                clock += .milliseconds(10)
                if ring >= block {
                    ring -= block
                    played += block
                } else {
                    played += ring
                    ring = 0
                    silenceBlocks += 1
                    streaming = false
                }
            }
            if !streaming { clock = t }
        }

        mutating func write(_ n: Int, at t: Duration) {
            run(until: t)
            if ring + n > 8192 { rejected += n; return }
            ring += n
            if !streaming { streaming = true; clock = t }
        }
    }

    /// Writes `total` bytes in `chunk`s at the times the pacer chooses, the link delivering each
    /// `latency` later; returns the device after the last byte played.
    func stream(rate: Int, total: Int, chunk: Int, latency: Duration) -> (Device, Pacer, Instant) {
        var pacer = Pacer(bytesPerSecond: rate)
        var device = Device(rate: rate)
        var now = ManualClock().now
        var sent = 0
        while sent < total {
            let n = min(chunk, total - sent)
            now = now.advanced(by: pacer.delay(before: n, at: now))
            #expect(pacer.fill(at: now) + n <= pacer.target, "a write never takes the model past its target")
            pacer.wrote(n, at: now)
            device.write(n, at: now.offset + latency)
            sent += n
        }
        let end = now.advanced(by: pacer.drained(at: now))
        device.run(until: end.offset + latency + .seconds(1))
        return (device, pacer, now)
    }

    @Test(
        "a sentence streams without a byte refused or a gap until its end, for PCM at 16 kHz and LC3, with the link's latency",
        arguments: [(32_000, 480), (4_000, 120), (16_000, 244)], [Duration.zero, .milliseconds(40)])
    func steady(_ format: (rate: Int, chunk: Int), _ latency: Duration) {
        let total = format.rate * 5  // five seconds of speech
        let (device, pacer, _) = stream(rate: format.rate, total: total, chunk: format.chunk, latency: latency)
        #expect(device.rejected == 0)
        #expect(device.played == total)
        #expect(device.silenceBlocks == 1, "the one empty block is the one after the end")
        #expect(pacer.written == total)
    }

    @Test("the first writes go at once, up to the target; then they wait as long as the speaker takes to play them")
    func waits() {
        var pacer = Pacer(bytesPerSecond: 32_000)
        let t0 = ManualClock().now
        for _ in 0..<12 {
            #expect(pacer.delay(before: 512, at: t0) == .zero)
            pacer.wrote(512, at: t0)
        }
        #expect(pacer.fill(at: t0) == 6144)
        #expect(pacer.delay(before: 512, at: t0) == .milliseconds(16), "512 bytes play in 16 ms")
        #expect(pacer.played(at: t0.advanced(by: .milliseconds(100))) == 3200)
        #expect(pacer.drained(at: t0) == .milliseconds(192))
        #expect(pacer.playsUntil == t0.advanced(by: .milliseconds(192)))
        #expect(Pacer(bytesPerSecond: 32_000).playsUntil == nil, "nothing written: nothing plays")
    }

    @Test("after the buffer runs dry between sentences, playback restarts with the next write; everything written counts as played once drained")
    func dry() {
        var pacer = Pacer(bytesPerSecond: 4_000)
        let t0 = ManualClock().now
        pacer.wrote(4_000, at: t0)
        let later = t0.advanced(by: .seconds(3))
        #expect(pacer.fill(at: later) == 0)
        #expect(pacer.played(at: later) == 4_000)
        pacer.wrote(1_000, at: later)
        #expect(pacer.fill(at: later) == 1_000, "the second sentence starts from an empty buffer, not from a debt")
        #expect(pacer.fill(at: later.advanced(by: .milliseconds(125))) == 500)
        #expect(pacer.written == 5_000)
    }

    @Test("a write larger than the target waits for an empty buffer rather than forever")
    func oversized() {
        var pacer = Pacer(bytesPerSecond: 32_000, buffer: 8192, margin: 2048)
        let t0 = ManualClock().now
        pacer.wrote(1_000, at: t0)
        #expect(pacer.delay(before: 10_000, at: t0) == .microseconds(31_250))
    }

    @Test("admit sleeps on the clock for exactly the wait, and is cancelled with its task")
    func admit() async throws {
        let clock = ManualClock()
        let writer = Task {
            var pacer = Pacer(bytesPerSecond: 32_000, buffer: 2048, margin: 1024)
            try await pacer.admit(1024, clock: clock)
            try await pacer.admit(512, clock: clock)
            return pacer.written
        }
        await clock.sleeping()
        #expect(clock.now.offset == .zero)
        clock.advance(by: .milliseconds(16))
        #expect(try await writer.value == 1536)

        let cancelled = Task {
            var pacer = Pacer(bytesPerSecond: 1_000, buffer: 2048, margin: 1024)
            try await pacer.admit(1024, clock: clock)
            try await pacer.admit(1024, clock: clock)
        }
        await clock.sleeping()
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await cancelled.value }
    }
}
