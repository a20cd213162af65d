// SPDX-License-Identifier: GPL-2.0-or-later

/// How a channel carries writes.
public enum ChannelFraming: Sendable, Equatable {
    /// A byte stream (the Monocle's REPL): a long write is split into packets, in order.
    case stream
    /// One write is one message on the device (the Monocle's data channel): a write longer than
    /// `maxPacketSize` is refused with `ChannelError.tooLong`, never split.
    case packets
}

/// Why a channel refused or failed a write.
public enum ChannelError: Error, Sendable, Equatable {
    case tooLong(size: Int, limit: Int)
    /// The link went away (or was released) before the write was done.
    case closed
}

/// One channel of the glasses link (the Monocle's serial REPL, or its data channel): bytes out in
/// order, notifications in as they arrive. The Monocle protocol sees only this.
public protocol ByteChannel: Sendable {
    /// The largest payload of one packet on the link (ATT MTU − 3).
    var maxPacketSize: Int { get }
    var framing: ChannelFraming { get }
    /// Writes `bytes` (see `framing`). Cancelling the calling task stops the write: packets not yet
    /// handed to the link are not sent, and the call throws CancellationError.
    func write(_ bytes: [UInt8]) async throws
    /// Notifications from the glasses, until the link drops. One reader.
    var incoming: PacketInbox { get }
}

/// A connected pair of glasses: the channels its GATT profile describes.
public protocol GlassesLink: Sendable {
    var profile: GATTProfile { get }
    /// The channel named `name` in the profile.
    func channel(_ name: String) -> (any ByteChannel)?
}

/// How the link of glasses made of more than one radio names each radio's channels.
public enum RadioChannel {
    /// `channel` of the radio `role`: "left/serial".
    public static func named(_ channel: String, on role: String) -> String { role + "/" + channel }
}
