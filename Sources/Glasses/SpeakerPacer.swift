// SPDX-License-Identifier: GPL-2.0-or-later

/// Keeps the glasses' speaker buffer (Halo: 8 KB; a write while it is full is dropped without an
/// error) neither empty mid-sentence nor over-full, by modelling it: bytes written minus what the
/// speaker has played since playback started at its rate. A write waits until it fits under
/// `target`, which leaves room for the bytes still in flight on the link. When the model says the
/// buffer ran dry (between sentences), playback restarts with the next write.
///
/// The estimate is safe in the direction that matters: bytes reach the device later than they
/// are written here, so the real buffer holds less than the model thinks, never more.
public struct SpeakerPacer<C: Clock>: Sendable where C.Duration == Duration {
    /// Bytes the speaker plays per second (PCM 16-bit at 16 kHz: 32,000; LC3 at 32 kbps: 4,000).
    public let bytesPerSecond: Int
    /// The fill a write may bring the buffer to.
    public let target: Int

    private var start: C.Instant?
    /// Bytes written since playback (re)started at `start`.
    private var run = 0
    /// Every byte written.
    public private(set) var written = 0

    public init(bytesPerSecond: Int, buffer: Int = 8192, margin: Int = 2048) {
        precondition(bytesPerSecond > 0 && buffer > margin && margin >= 0)
        self.bytesPerSecond = bytesPerSecond
        self.target = buffer - margin
    }

    /// What the buffer holds at `now`, as modelled.
    public func fill(at now: C.Instant) -> Int {
        guard let start else { return 0 }
        return max(0, run - bytes(in: start.duration(to: now)))
    }

    /// How long a write of `count` bytes must wait at `now` to fit under the target (zero: now).
    /// A write larger than the target waits for an empty buffer.
    public func delay(before count: Int, at now: C.Instant) -> Duration {
        let over = fill(at: now) + min(count, target) - target
        return over <= 0 ? .zero : duration(of: over)
    }

    /// Notes a write of `count` bytes at `now`.
    public mutating func wrote(_ count: Int, at now: C.Instant) {
        if start == nil || fill(at: now) == 0 {
            start = now
            run = 0
        }
        run += count
        written += count
    }

    /// The bytes the speaker has played by `now`: what was written less what still waits.
    public func played(at now: C.Instant) -> Int { written - fill(at: now) }

    /// When, after `now`, the last byte written will have played.
    public func drained(at now: C.Instant) -> Duration { duration(of: fill(at: now)) }

    /// When the last byte written will have played, as modelled; nil before any write.
    public var playsUntil: C.Instant? { start.map { $0.advanced(by: duration(of: run)) } }

    /// Waits until `count` bytes fit, then notes them as written: the caller writes them next.
    public mutating func admit(_ count: Int, clock: C) async throws {
        let wait = delay(before: count, at: clock.now)
        if wait > .zero { try await clock.sleep(for: wait) }
        wrote(count, at: clock.now)
    }

    private func bytes(in elapsed: Duration) -> Int {
        // Whole microseconds in integers: the waits are whole microseconds, rounded up, so a
        // wait's end always counts the bytes it waited for as played.
        let (seconds, attoseconds) = elapsed.components
        guard seconds >= 0 else { return 0 }
        let micros = Int(seconds) * 1_000_000 + Int(attoseconds / 1_000_000_000_000)
        return micros * bytesPerSecond / 1_000_000
    }

    /// The time `count` bytes take to play, rounded up to a microsecond so a wait never ends short.
    private func duration(of count: Int) -> Duration {
        .microseconds((count * 1_000_000 + bytesPerSecond - 1) / bytesPerSecond)
    }
}
