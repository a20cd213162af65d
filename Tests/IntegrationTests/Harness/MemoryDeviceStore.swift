// SPDX-License-Identifier: GPL-2.0-or-later
import LinkKit
import Synchronization

/// Pairing kept in memory, for driving the link library directly.
final class MemoryDeviceStore: DeviceStore {
    let device = Mutex<(address: BluetoothAddress, name: String)?>(nil)
    func pairedDevice() async throws -> (address: BluetoothAddress, name: String)? { device.withLock { $0 } }
    func savePaired(_ address: BluetoothAddress, name: String, at unixMS: Int64) async throws {
        device.withLock { $0 = (address, name) }
    }
    func forget(_ address: BluetoothAddress) async throws { device.withLock { $0 = nil } }
    func touch(_ address: BluetoothAddress, at unixMS: Int64) async throws {}
}
