// SPDX-License-Identifier: GPL-2.0-or-later

extension Duration {
    /// `base` doubled `attempt` times, but never more than `cap`: the common core of the HTTP retry
    /// and the reconnect backoff (each adds its own jitter).
    public static func doubling(_ base: Duration, attempt: Int, cap: Duration) -> Duration {
        min(base * Double(1 << min(max(attempt, 0), 30)), cap)
    }
}
