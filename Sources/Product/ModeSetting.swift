// SPDX-License-Identifier: GPL-2.0-or-later
import AssistantEngine
import Concurrency
import Synchronization

/// The current mode, read by every query and written by the Mode property's setter on the bus
/// thread, which must not wait: a write is handed on through `changes` to be stored later.
public final class ModeSetting: Sendable {
    private let value: Mutex<Mode>
    private let continuation: AsyncStream<Mode>.Continuation
    /// The latest mode after each write (older unsaved ones are superseded), for storing it.
    public let changes: AsyncStream<Mode>
    /// The mode for those that follow it (scene mode starts and stops with it).
    public let watched: Watched<Mode>

    public init(_ mode: Mode) {
        value = Mutex(mode)
        watched = Watched(mode)
        (changes, continuation) = AsyncStream.makeStream(of: Mode.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Runs `body` (quick: it queues a signal) only while the mode is `mode`, holding it: a write
    /// waits until `body` has run, so what `body` queued for the bus goes out before the write's
    /// reply, and nothing of the old mode after it. Whether it ran.
    public func whileIn(_ mode: Mode, _ body: () -> Void) -> Bool {
        value.withLock { current in
            guard current == mode else { return false }
            body()
            return true
        }
    }

    public var mode: Mode {
        get { value.withLock { $0 } }
        set {
            value.withLock { $0 = newValue }
            continuation.yield(newValue)
            watched.set(newValue)
        }
    }
}
