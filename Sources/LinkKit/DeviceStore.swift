// SPDX-License-Identifier: GPL-2.0-or-later

/// Paired devices, as stored.
public protocol DeviceStore: Sendable {
    func pairedDevice() async throws -> (address: BluetoothAddress, name: String)?
    func savePaired(_ address: BluetoothAddress, name: String, at unixMS: Int64) async throws
    func forget(_ address: BluetoothAddress) async throws
    /// Notes that the device was connected at `unixMS`.
    func touch(_ address: BluetoothAddress, at unixMS: Int64) async throws
}
