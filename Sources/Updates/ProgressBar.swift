// SPDX-License-Identifier: GPL-2.0-or-later
import Glasses

/// One bar across an update's phases: each planned phase owns a share of 0...100 by its weight
/// (roughly its time), and the bar never goes back (a resumed transfer restarts its count).
public struct ProgressBar: Sendable, Equatable {
    public private(set) var phases: [(phase: UpdatePhase, weight: Double)]
    public private(set) var percentage: UInt32 = 0

    public init(_ phases: [(UpdatePhase, Double)]) {
        self.phases = phases.map { (phase: $0.0, weight: max(0, $0.1)) }
    }

    public static func == (a: ProgressBar, b: ProgressBar) -> Bool {
        a.percentage == b.percentage && a.phases.map(\.phase) == b.phases.map(\.phase)
            && a.phases.map(\.weight) == b.phases.map(\.weight)
    }

    /// The bar for the images a plan applies: each updater's phases with their weights, between
    /// checking and the scripts uploaded at the end.
    public static func plan(_ steps: [[(UpdatePhase, Double)]]) -> ProgressBar {
        ProgressBar([(.checking, 1)] + steps.flatMap { $0 } + [(.uploadingScripts, 2)])
    }

    /// Moves to `fraction` (0...1) of the first planned `phase` at or after the current point,
    /// and returns the percentage (never less than before).
    @discardableResult
    public mutating func advance(_ phase: UpdatePhase, _ fraction: Double) -> UInt32 {
        if phase == .done {
            percentage = 100
            return percentage
        }
        let total = phases.reduce(0) { $0 + $1.weight }
        guard total > 0 else { return percentage }
        // Phases repeat (restarting after the firmware and after the FPGA): take the one whose
        // span holds or follows what is shown now.
        var start = 0.0
        var candidate: Double?
        for (p, weight) in phases {
            if p == phase {
                let value = (start + weight * min(1, max(0, fraction))) / total * 100
                if candidate == nil || (start + weight) / total * 100 >= Double(percentage) {
                    candidate = value
                    if (start + weight) / total * 100 >= Double(percentage) { break }
                }
            }
            start += weight
        }
        if let candidate { percentage = max(percentage, min(99, UInt32(candidate.rounded(.down)))) }
        return percentage
    }
}
