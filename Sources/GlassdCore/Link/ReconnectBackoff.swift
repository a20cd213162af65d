// SPDX-License-Identifier: GPL-2.0-or-later

/// How long to wait before the next reconnect attempt: doubling from `initial` up to `maximum`,
/// with ±20 % jitter so that many daemons do not retry in step; back to the start after a
/// connection that held for `stableAfter`.
public struct ReconnectBackoff: Sendable {
    public var initial: Duration
    public var maximum: Duration
    public var stableAfter: Duration
    public private(set) var attempt = 0

    public init(initial: Duration = .seconds(1), maximum: Duration = .seconds(60), stableAfter: Duration = .seconds(30)) {
        self.initial = initial
        self.maximum = maximum
        self.stableAfter = stableAfter
    }

    /// The next wait; `jitter` in 0...1 maps to −20 %…+20 %.
    public mutating func next(jitter: Double = Double.random(in: 0...1)) -> Duration {
        let base = Duration.doubling(initial, attempt: attempt, cap: maximum)
        attempt += 1
        return min(base * (0.8 + 0.4 * jitter), maximum)
    }

    /// A connection lasted `duration`: if that was stable, start over.
    public mutating func connectionEnded(after duration: Duration) {
        if duration >= stableAfter { attempt = 0 }
    }
}
