// SPDX-License-Identifier: GPL-2.0-or-later

/// What the link supervisor tells a session: a link came up (a new generation each time) or the
/// link of that generation went down. Sessions run per generation and stop at its `down`.
public enum LinkEvent: Sendable {
    case up(any GlassesLink, generation: UInt64)
    case down(generation: UInt64, reason: String)

    public var generation: UInt64 {
        switch self {
        case .up(_, let generation), .down(let generation, _): generation
        }
    }
}
