// SPDX-License-Identifier: GPL-2.0-or-later
import Firmware
import Glasses
import LinkKit

/// Brilliant Frame's (and Halo's) GATT service: the host writes Lua chunks, control bytes and
/// 0x01-prefixed data to RX, and gets print output and data as TX notifications
/// (frame-protocol.md).
public enum FrameUUID {
    public static let service = "7a230001-5475-a6a4-654c-8431f6ad49c4"
    public static let rx = "7a230002-5475-a6a4-654c-8431f6ad49c4"
    public static let tx = "7a230003-5475-a6a4-654c-8431f6ad49c4"
    /// Only Halo's firmware has it (its speaker's audio in): how a Halo is told from a Frame.
    public static let haloAudio = "7a230005-5475-a6a4-654c-8431f6ad49c4"
}

/// The Frame profile's channel name.
public enum FrameChannel {
    public static let lua = "lua"
}

extension GATTProfile {
    /// One channel: each write is one Lua chunk, control byte or data message, never split, and
    /// waits for the Frame's response, which paces the host to what the firmware takes in.
    public static let frame = GATTProfile(
        name: "frame",
        channels: [
            Channel(
                name: FrameChannel.lua, service: FrameUUID.service, write: FrameUUID.rx, notify: FrameUUID.tx, framing: .packets,
                writeWithResponse: true)
        ])
}

extension GlassesKind {
    /// Frame advertises the Frame service and needs a bond (LE Secure Connections, Just Works).
    /// Its firmware goes through its Nordic DFU bootloader. A Halo advertises the same service and
    /// shows its audio characteristic once connected: that one is not a Frame.
    public static let frame = GlassesKind(
        names: [.frame], title: "a Frame", advertisedService: FrameUUID.service, profile: .frame, bonds: true,
        updaters: [NordicDFUUpdater()],
        makeSession: { FrameSession(clock: ContinuousClock(), logger: $0) },
        bootloaderAddress: NordicDFUUpdater.bootloaderAddress(of:)
    ) { sighting in
        guard sighting.serviceUUIDs.contains(FrameUUID.service), !sighting.characteristicUUIDs.contains(FrameUUID.haloAudio)
        else { return nil }
        return .frame
    }
}

extension GlassesKindName {
    public static let frame = GlassesKindName("frame")
}
