// SPDX-License-Identifier: GPL-2.0-or-later
@testable import Bluetooth
import DBusKit
import Testing

@Suite("BlueZ mirror: appearances and reasons", .timeLimit(.minutes(3)))
struct BlueZMirrorTests {
    private let device = "/org/bluez/hci0/dev_00_00_00_00_00_04"

    @Test("a device object counts as appearing when it is added anew, not when more of it is added or on a reread that already had it")
    func appearances() {
        let state = BlueZState()
        #expect(state.snapshot.appearances[device] == nil)
        state.interfacesAdded(device, [BlueZ.device: ["Address": .string("00:00:00:00:00:04")]])
        #expect(state.snapshot.appearances[device] == 1)
        state.interfacesAdded(device, [BlueZ.device: ["RSSI": .int16(-40)], "org.bluez.Battery1": [:]])
        #expect(state.snapshot.appearances[device] == 1)
        state.interfacesRemoved(device, [BlueZ.device, "org.bluez.Battery1"])
        state.interfacesAdded(device, [BlueZ.device: [:]])
        #expect(state.snapshot.appearances[device] == 2)
        state.reset([device: [BlueZ.device: [:]]], present: true)
        #expect(state.snapshot.appearances[device] == 2)
        state.reset([:], present: true)
        state.reset([device: [BlueZ.device: [:]]], present: true)
        #expect(state.snapshot.appearances[device] == 3)
    }

    @Test("BlueZ's errors read as their message, or the last part of their name, never the D-Bus name")
    func reasons() {
        #expect(BlueZ.reason(BusError(name: "org.bluez.Error.Failed", message: "le-connection-abort-by-local")) == "le-connection-abort-by-local")
        #expect(BlueZ.reason(BusError(name: "org.bluez.Error.NotReady", message: " ")) == "NotReady")
        #expect(BlueZ.reason(BlueZState.TimedOut()) == "no answer in time")
    }
}
