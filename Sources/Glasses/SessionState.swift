// SPDX-License-Identifier: GPL-2.0-or-later

/// Where a session with the glasses stands (org.glassd.Device1.State; exact spelling is the contract).
public enum SessionState: String, Sendable, CaseIterable {
    case unpaired, disconnected, connecting
    /// Entering the device's REPL.
    case handshake
    /// Reading versions and battery.
    case checking
    /// Putting glassd's scripts (or app) on the device.
    case uploading
    /// Starting (or resuming) them, until they say they are ready.
    case starting
    /// Waiting for a tap.
    case ready
    /// Capturing or answering.
    case busy
    /// The link is lent out for an update: glassd's scripts are stopped.
    case updating
    /// The session gave up; the reason says why, and the link is retried.
    case error
}

/// What a session shows of the glasses.
public struct SessionStatus: Sendable, Equatable {
    public var state: SessionState
    public var reason: String
    public var info: DeviceInfo?
    /// The link generation this status is about (`LinkEvent.generation`).
    public var generation: UInt64

    public init(state: SessionState, reason: String = "", info: DeviceInfo? = nil, generation: UInt64 = 0) {
        self.state = state
        self.reason = reason
        self.info = info
        self.generation = generation
    }
}
