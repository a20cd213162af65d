// SPDX-License-Identifier: GPL-2.0-or-later
import LinkKit

/// Glasses updated over a channel of their own link while their application runs (a Halo:
/// MCUmgr's SMP service), not through a bootloader: their session lends that channel to the
/// updater. The session does not read it itself, so the updater is its one reader.
public protocol UpdateChannelAccess: Sendable {
    /// The current link's update channel; nil while no link is up or when the glasses do not
    /// offer it. A new link brings a new channel: ask again after a drop.
    func updateChannel() async -> (any ByteChannel)?
}
