// SPDX-License-Identifier: GPL-2.0-or-later
import LinkKit
import Testing

@Suite("Link basics", .timeLimit(.minutes(5)))
struct LinkTests {
    @Test("addresses parse, normalise and refuse junk")
    func addresses() {
        #expect(BluetoothAddress("aa:bb:cc:dd:ee:0f")?.description == "AA:BB:CC:DD:EE:0F")
        #expect(BluetoothAddress("AA:BB:CC:DD:EE:0F")?.pathComponent == "AA_BB_CC_DD_EE_0F")
        for bad in ["", "AA:BB:CC:DD:EE", "AA:BB:CC:DD:EE:FF:00", "AA-BB-CC-DD-EE-FF", "GG:BB:CC:DD:EE:FF", "A:BB:CC:DD:EE:FFF", "AA:BB:CC:DD:EE:F "] {
            #expect(BluetoothAddress(bad) == nil, "\(bad)")
        }
    }
}
