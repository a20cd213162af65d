// SPDX-License-Identifier: GPL-2.0-or-later
import CSystemd
import Concurrency
import Glibc

/// A one-shot timer on the loop (CLOCK_MONOTONIC): `handler` runs on the loop thread once the time
/// set by `schedule(after:)` has come, unless cancelled or rescheduled first. Used on the loop
/// thread only; released, it is cancelled.
public final class LoopTimer {
    private let loop: EventLoop
    private let purpose: String
    private let handler: () -> Void
    private var source: OpaquePointer?

    public init(_ loop: EventLoop, purpose: String, handler: @escaping () -> Void) {
        self.loop = loop
        self.purpose = purpose
        self.handler = handler
    }

    /// Fires once, `delay` from now (at once if zero or less); replaces any earlier schedule.
    public func schedule(after delay: Duration) throws(ResourceError) {
        precondition(loop.isOnLoopThread, "a loop timer set off the loop thread")
        let (seconds, attoseconds) = max(delay, .zero).components
        // Microseconds, rounded up: the handler never runs before its time.
        let usec = UInt64(seconds) * 1_000_000 + UInt64((attoseconds + 999_999_999_999) / 1_000_000_000_000)
        if let source {
            sd_event_source_set_time_relative(source, usec)
            sd_event_source_set_enabled(source, Int32(SD_EVENT_ONESHOT))
            return
        }
        let handler = handler
        let box = Unmanaged.passRetained(SourceHandler { _ in handler() })
        var made: OpaquePointer?
        // Accuracy 1 µs: sd-event's default (250 ms) would let curl's timeouts slip that far.
        let r = sd_event_add_time_relative(loop.event, &made, CLOCK_MONOTONIC, usec, 1, timeCallback, box.toOpaque())
        guard r >= 0, let made else {
            box.release()
            throw ResourceError(call: "sd_event_add_time_relative", purpose: purpose, errno: -r)
        }
        sd_event_source_set_destroy_callback(made, releaseHandler)
        source = made
    }

    /// The handler does not run until scheduled again.
    public func cancel() {
        guard let source else { return }
        precondition(loop.isOnLoopThread, "a loop timer cancelled off the loop thread")
        sd_event_source_set_enabled(source, Int32(SD_EVENT_OFF))
    }

    deinit {
        if let source = source.take() { loop.release(source) }
    }
}

@available(*, unavailable)
extension LoopTimer: Sendable {}

private func timeCallback(_ source: OpaquePointer?, _ usec: UInt64, _ userdata: UnsafeMutableRawPointer?) -> Int32 {
    guard let userdata else { return 0 }
    let handler = Unmanaged<SourceHandler>.fromOpaque(userdata).takeUnretainedValue()
    handler.body(0)
    return 0
}
