// SPDX-License-Identifier: GPL-2.0-or-later

/// Where an update reports its phases and progress (the daemon's org.glassd.Job1; tests record).
public protocol UpdateProgress: Sendable {
    /// Enters `phase`. Throws CancellationError when a cancel came earlier and `phase` may not be
    /// stopped (so the update stops before it, not in it).
    func enter(_ phase: UpdatePhase) throws
    /// `fraction` of `phase` done.
    func progress(_ phase: UpdatePhase, _ fraction: Double)
}
