// SPDX-License-Identifier: GPL-2.0-or-later
import Frame
import Glasses
import Halo
import LinkKit
import Testing

@Suite("Telling a Halo from a Frame", .timeLimit(.minutes(5)))
struct HaloKindTests {
    let advertising = Sighting(name: "Halo 4F", serviceUUIDs: [FrameUUID.service])
    let connected = Sighting(
        name: "Halo 4F", serviceUUIDs: [FrameUUID.service, HaloUUID.smpService],
        characteristicUUIDs: [FrameUUID.rx, FrameUUID.tx, HaloUUID.audio.uppercased(), HaloUUID.smp])

    @Test("in either order of registration, a Halo is a Frame until connected and a Halo once its audio characteristic shows")
    func identify() {
        for kinds: [GlassesKind] in [[.halo, .frame], [.frame, .halo]] {
            #expect(kinds.identify(advertising)?.name == .frame)
            #expect(kinds.identify(advertising)?.kind.profile.name == "frame")
            let halo = kinds.identify(connected)
            #expect(halo?.name == .halo)
            #expect(halo?.kind.profile == .halo)
        }
        #expect(GlassesKind.halo.bonds)
        #expect(GlassesKind.halo.refines == .frame)
        #expect(GlassesKind.halo.bootloaderAddress(BluetoothAddress("F0:00:00:00:00:4F")!) == nil, "Halo has no Nordic bootloader")
    }

    @Test("a Halo seen again unconnected keeps its kind: it refines the Frame kind, which does not refine it")
    func variant() {
        let kinds: [GlassesKind] = [.monocle(), .halo, .frame]
        #expect(kinds.isVariant(.halo, of: .frame))
        #expect(!kinds.isVariant(.frame, of: .halo))
        #expect(!kinds.isVariant(.halo, of: .halo))
        #expect(!kinds.isVariant(GlassesKindName("monocle"), of: .frame))
    }

    @Test("the profile: the Frame's Lua channel unchanged, the speaker's audio and SMP optional, and no write order kept across them")
    func profile() {
        let profile = GATTProfile.halo
        #expect(profile.channels.first == GATTProfile.frame.channels.first)
        #expect(profile.channels.map(\.name) == [HaloChannel.lua, HaloChannel.audio, HaloChannel.smp])
        #expect(profile.channels.dropFirst().allSatisfy { $0.optional && !$0.writeWithResponse })
        #expect(profile.channels.first?.optional == false)
        #expect(profile.channels[1].notify == nil && profile.channels[1].framing == .stream)
        #expect(!profile.orderedWrites)
        #expect(GATTProfile.nordicDFU.orderedWrites)
    }
}

extension GlassesKind {
    /// A stand-in for a third kind in the list, so `isVariant` is asked among several.
    fileprivate static func monocle() -> GlassesKind {
        GlassesKind(
            names: [GlassesKindName("monocle")], title: "a Monocle", advertisedService: "6e400001-b5a3-f393-e0a9-e50e24dcca9e",
            profile: GATTProfile(name: "monocle", channels: []), bonds: false, updaters: [],
            makeSession: { FrameSession(clock: ContinuousClock(), logger: $0) }
        ) { _ in nil }
    }
}
