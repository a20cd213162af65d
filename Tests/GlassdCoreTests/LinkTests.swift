// SPDX-License-Identifier: GPL-2.0-or-later
import GlassdCore
import Testing

@Suite("Link basics")
struct LinkTests {
    @Test("addresses parse, normalise and refuse junk")
    func addresses() {
        #expect(BluetoothAddress("aa:bb:cc:dd:ee:0f")?.description == "AA:BB:CC:DD:EE:0F")
        #expect(BluetoothAddress("AA:BB:CC:DD:EE:0F")?.pathComponent == "AA_BB_CC_DD_EE_0F")
        for bad in ["", "AA:BB:CC:DD:EE", "AA:BB:CC:DD:EE:FF:00", "AA-BB-CC-DD-EE-FF", "GG:BB:CC:DD:EE:FF", "A:BB:CC:DD:EE:FFF", "AA:BB:CC:DD:EE:F "] {
            #expect(BluetoothAddress(bad) == nil, "\(bad)")
        }
    }

    @Test("a Monocle is known by its serial service or its name")
    func monocle() {
        #expect(MonocleUUID.isMonocle(name: nil, uuids: ["6E400001-B5A3-F393-E0A9-E50E24DCCA9E"]))
        #expect(MonocleUUID.isMonocle(name: "Monocle", uuids: []))
        #expect(!MonocleUUID.isMonocle(name: "Heart rate", uuids: ["0000180d-0000-1000-8000-00805f9b34fb"]))
    }

    @Test("strongest first, ties by address")
    func ordering() {
        let a = BluetoothAddress("00:00:00:00:00:01")!
        let b = BluetoothAddress("00:00:00:00:00:02")!
        let c = BluetoothAddress("00:00:00:00:00:03")!
        let sorted = ScanResult.strongestFirst([
            ScanResult(address: a, name: "m", rssi: -70), ScanResult(address: c, name: "m", rssi: -45),
            ScanResult(address: b, name: "m", rssi: -70),
        ])
        #expect(sorted.map(\.address) == [c, a, b])
    }
}
