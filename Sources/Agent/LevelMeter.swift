// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation

/// The microphone's loudness for a level display: the RMS of the samples since the last reading,
/// in dBFS (0 at full scale), at most once per interval so the display is not flooded.
public struct LevelMeter<C: Clock>: Sendable where C.Duration == Duration {
    /// Silence reads this rather than -infinity.
    public static var floor: Double { -100 }

    public let interval: Duration
    private var sumOfSquares: Double = 0
    private var count = 0
    private var published: C.Instant?

    public init(interval: Duration = .milliseconds(100)) {
        self.interval = interval
    }

    /// The level of everything added since the last one returned, when `interval` has passed since then.
    public mutating func add(_ samples: [Int16], at now: C.Instant) -> Double? {
        for s in samples {
            let x = Double(s)
            sumOfSquares += x * x
        }
        count += samples.count
        guard count > 0 else { return nil }
        if let published, published.duration(to: now) < interval { return nil }
        let rms = (sumOfSquares / Double(count)).squareRoot() / 32768
        sumOfSquares = 0
        count = 0
        published = now
        return rms > 0 ? min(0, max(Self.floor, 20 * log10(rms))) : Self.floor
    }
}
