// SPDX-License-Identifier: GPL-2.0-or-later
import Frame
import Glasses
import LinkKit
import MCUmgr

/// Halo's characteristics beyond the Frame's Lua pair (halo-protocol.md): its speaker's audio in,
/// and MCUmgr's SMP service for firmware updates. Either may be absent on some firmware.
public enum HaloUUID {
    /// AUDIO RX: PCM or LC3 into the speaker's 8 KB buffer, written without response.
    public static let audio = FrameUUID.haloAudio
    /// The standard MCUmgr SMP service and its one characteristic (write without response + notify).
    public static let smpService = "8d53dc1d-1db7-4cd3-868b-8a527460aa84"
    public static let smp = "da2e7828-fbce-4e01-ae9e-261174997c48"
}

/// The Halo profile's channel names.
public enum HaloChannel {
    public static let lua = FrameChannel.lua
    public static let audio = "audio"
    public static let smp = "smp"
}

extension GATTProfile {
    /// The Frame's Lua channel, plus the speaker's audio (a byte stream: the firmware joins a
    /// frame split across writes) and SMP (one request or response per message) where offered.
    /// Neither needs the Lua channel's order, so they may go through acquired sockets.
    public static let halo = GATTProfile(
        name: "halo",
        channels: GATTProfile.frame.channels + [
            Channel(
                name: HaloChannel.audio, service: FrameUUID.service, write: HaloUUID.audio, notify: nil, framing: .stream,
                optional: true),
            Channel(
                name: HaloChannel.smp, service: HaloUUID.smpService, write: HaloUUID.smp, notify: HaloUUID.smp,
                framing: .packets, optional: true),
        ])
}

extension GlassesKind {
    /// Brilliant Halo: a Frame's Lua session, with the Halo's app, on its own profile. It advertises as a Frame does and
    /// is told apart once connected, by its audio characteristic (as Brilliant's SDK does), so it
    /// refines the Frame kind. Register it before `.frame`. Its firmware is not updated through a
    /// Nordic bootloader: it takes MCUboot images over SMP, with a test boot glassd confirms.
    public static let halo = GlassesKind(
        names: [.halo], title: "a Halo", advertisedService: FrameUUID.service, profile: .halo, bonds: true,
        updaters: [MCUmgrUpdater()],
        makeSession: { FrameSession(model: .halo, clock: ContinuousClock(), logger: $0) },
        refines: .frame
    ) { sighting in
        sighting.serviceUUIDs.contains(FrameUUID.service) && sighting.characteristicUUIDs.contains(HaloUUID.audio) ? .halo : nil
    }
}

extension GlassesKindName {
    public static let halo = GlassesKindName("halo")
}
