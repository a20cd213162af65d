// SPDX-License-Identifier: GPL-2.0-or-later

/// An agent session's life, as AgentSession1.State spells it.
public enum AgentState: String, Sendable, Equatable {
    case starting, running, stopping, stopped, failed

    /// Whether the session still holds the glasses (and the server's worker).
    public var isActive: Bool { self == .starting || self == .running || self == .stopping }
}
