// SPDX-License-Identifier: GPL-2.0-or-later
import Glasses
import LinkKit
import Monocle
import Testing

@Suite("Telling glasses apart", .timeLimit(.minutes(5)))
struct MonocleKindTests {
    @Test("a Monocle is known by its serial service or its name; nothing else is one")
    func monocle() {
        let kinds: [GlassesKind] = [.monocle]
        #expect(kinds.identify(Sighting(name: nil, serviceUUIDs: ["6E400001-B5A3-F393-E0A9-E50E24DCCA9E"]))?.name == .monocle)
        #expect(kinds.identify(Sighting(name: "Monocle", serviceUUIDs: []))?.name == .monocle)
        #expect(kinds.identify(Sighting(name: "Heart rate", serviceUUIDs: ["0000180d-0000-1000-8000-00805f9b34fb"])) == nil)
    }

    @Test("strongest first, ties by address")
    func ordering() {
        let a = BluetoothAddress("00:00:00:00:00:01")!
        let b = BluetoothAddress("00:00:00:00:00:02")!
        let c = BluetoothAddress("00:00:00:00:00:03")!
        let sorted = ScanResult.strongestFirst([
            ScanResult(address: a, name: "m", rssi: -70, kind: .monocle), ScanResult(address: c, name: "m", rssi: -45, kind: .monocle),
            ScanResult(address: b, name: "m", rssi: -70, kind: .monocle),
        ])
        #expect(sorted.map(\.address) == [c, a, b])
    }
}
