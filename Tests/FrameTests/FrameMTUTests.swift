// SPDX-License-Identifier: GPL-2.0-or-later
import Frame
import Testing

@Suite("Frame MTU arithmetic", .timeLimit(.minutes(5)))
struct FrameMTUTests {
    @Test("the Frame's preferred MTU 247: 244-byte Lua chunks, 243 bytes of data")
    func preferred() {
        let mtu = FrameMTU(attPayload: 244)
        #expect(mtu.mtu == 247)
        #expect(mtu.maxLuaString == 244)
        #expect(mtu.maxData == 243)
        #expect(mtu.maxMessagePayload == 242)
    }

    @Test("an ATT value is at most 512 bytes, whatever the MTU", arguments: [(514, 509, 508), (517, 509, 508), (23, 20, 19), (512, 509, 508), (185, 182, 181)])
    func capped(mtu: Int, lua: Int, data: Int) {
        #expect(FrameMTU(mtu: mtu).maxLuaString == lua)
        #expect(FrameMTU(mtu: mtu).maxData == data)
        #expect(FrameMTU(attPayload: mtu - 3) == FrameMTU(mtu: mtu))
    }
}
