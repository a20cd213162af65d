// SPDX-License-Identifier: GPL-2.0-or-later
import Frame
import Glasses
import Testing

@Suite("Telling a Frame from a Halo", .timeLimit(.minutes(5)))
struct FrameKindTests {
    @Test("the Frame service makes a Frame, Halo's audio characteristic a Halo; a name alone does not")
    func kinds() {
        let kinds: [GlassesKind] = [.frame]
        #expect(kinds.identify(Sighting(name: "Frame 4F", serviceUUIDs: [FrameUUID.service.uppercased()]))?.name == .frame)
        #expect(
            kinds.identify(Sighting(name: "Frame 4F", serviceUUIDs: [FrameUUID.service], characteristicUUIDs: [FrameUUID.rx, FrameUUID.haloAudio]))?
                .name == .halo)
        #expect(kinds.identify(Sighting(name: "Frame 4F", serviceUUIDs: [])) == nil)
        #expect(GlassesKind.frame.bonds)
    }
}
