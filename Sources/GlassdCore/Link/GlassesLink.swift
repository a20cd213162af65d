// SPDX-License-Identifier: GPL-2.0-or-later

/// One direction pair of the glasses link (the Monocle's serial REPL or its data channel):
/// bytes out in order, notifications in as they arrive. The Monocle protocol sees only this.
public protocol ByteChannel: Sendable {
    /// Writes `bytes`, split into pieces the link can carry, in order.
    func write(_ bytes: [UInt8]) async throws
    /// Notifications from the glasses, until the link drops.
    var incoming: AsyncStream<[UInt8]> { get }
}

/// A connected pair of glasses.
public protocol GlassesLink: Sendable {
    var serial: any ByteChannel { get }
    var data: any ByteChannel { get }
}

