// SPDX-License-Identifier: GPL-2.0-or-later
import Concurrency

/// When to try an upstream request again: capped exponential backoff with jitter, Retry-After
/// honoured, all inside one overall deadline.
public struct RetryPolicy: Sendable {
    public var maxAttempts: Int
    public var baseDelay: Duration
    public var maxDelay: Duration

    public init(maxAttempts: Int = 4, baseDelay: Duration = .milliseconds(500), maxDelay: Duration = .seconds(8)) {
        self.maxAttempts = maxAttempts
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
    }

    /// The wait before attempt `attempt + 1` (attempt counts from 0), with up to 25 % jitter off.
    public func backoff(after attempt: Int, jitter: Double = Double.random(in: 0...1)) -> Duration {
        let raw = Duration.doubling(baseDelay, attempt: attempt, cap: maxDelay)
        return raw * (1 - 0.25 * jitter)
    }

    /// The longest wait a server may ask for; longer requests are treated as this (the overall
    /// deadline still applies).
    public static let maxRetryAfter = Duration.seconds(60)

    /// Parses `Retry-After` (delta seconds) or `retry-after-ms`; nil when absent or unusable
    /// (negative, NaN, infinite: a hostile header must not trap the daemon).
    public static func retryAfter(_ headers: [String: String]) -> Duration? {
        func parse(_ name: String, scale: Double) -> Duration? {
            guard let value = headers[name].flatMap({ Double($0.trimmingWhitespace) }), value.isFinite, value >= 0 else {
                return nil
            }
            return .milliseconds(min(value * scale, 60_000))
        }
        return parse("retry-after-ms", scale: 1) ?? parse("retry-after", scale: 1000)
    }
}

extension String {
    var trimmingWhitespace: String {
        String(drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
    }
}
