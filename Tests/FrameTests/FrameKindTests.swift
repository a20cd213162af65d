// SPDX-License-Identifier: GPL-2.0-or-later
import Frame
import Glasses
import Testing

@Suite("Telling a Frame", .timeLimit(.minutes(5)))
struct FrameKindTests {
    @Test("the Frame service makes a Frame until the device shows Halo's audio characteristic; a name alone does not")
    func kinds() {
        let kinds: [GlassesKind] = [.frame]
        #expect(kinds.identify(Sighting(name: "Frame 4F", serviceUUIDs: [FrameUUID.service.uppercased()]))?.name == .frame)
        #expect(
            kinds.identify(Sighting(name: "Frame 4F", serviceUUIDs: [FrameUUID.service], characteristicUUIDs: [FrameUUID.rx, FrameUUID.tx]))?
                .name == .frame)
        #expect(
            kinds.identify(Sighting(name: "Halo 4F", serviceUUIDs: [FrameUUID.service], characteristicUUIDs: [FrameUUID.rx, FrameUUID.haloAudio]))
                == nil, "a connected Halo is not a Frame")
        #expect(kinds.identify(Sighting(name: "Frame 4F", serviceUUIDs: [])) == nil)
        #expect(GlassesKind.frame.bonds)
    }
}
