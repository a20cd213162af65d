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

    @Test("backoff doubles from 1 s to a 60 s cap with ±20 % jitter, and resets after a stable link")
    func backoff() {
        var backoff = ReconnectBackoff()
        let waits = (0..<9).map { _ in backoff.next(jitter: 0.5) }
        #expect(waits.prefix(7) == [.seconds(1), .seconds(2), .seconds(4), .seconds(8), .seconds(16), .seconds(32), .seconds(60)])
        #expect(waits.last == .seconds(60))
        #expect(backoff.next(jitter: 0) == .seconds(48))
        #expect(backoff.next(jitter: 1) == .seconds(60))
        var early = ReconnectBackoff()
        #expect(early.next(jitter: 0) == .milliseconds(800))
        let second = early.next(jitter: 1)
        #expect(second > .milliseconds(2399) && second < .milliseconds(2401))
        early.connectionEnded(after: .seconds(5))
        #expect(early.next(jitter: 0.5) == .seconds(4))
        early.connectionEnded(after: .seconds(31))
        #expect(early.next(jitter: 0.5) == .seconds(1))
    }
}
