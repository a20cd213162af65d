// SPDX-License-Identifier: GPL-2.0-or-later

/// Something that happens once: `wait()` returns when (or if already) it has been fired, or when
/// the waiting task is cancelled.
public final class OneShotEvent: Sendable {
    /// A pulse that only ever counts from 0 to 1 or more: fired is "some pulse came".
    private let pulse = Pulse()

    public init() {}

    public func fire() { pulse.pulse() }

    /// Whether it has been fired (a wait that returned without it was cancelled).
    public var hasFired: Bool { pulse.ticket() != 0 }

    public func wait() async { await pulse.wait(after: 0) }
}
