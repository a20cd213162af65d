// SPDX-License-Identifier: GPL-2.0-or-later

/// Paired glasses, as stored: at most one pairing at a time.
public protocol DeviceStore: Sendable {
    func pairedGlasses() async throws -> PairedGlasses?
    func savePaired(_ glasses: PairedGlasses, at unixMS: Int64) async throws
    /// Forgets the pairing named by `address` (its first radio's), with all its radios.
    func forget(_ address: BluetoothAddress) async throws
    /// Notes that the glasses were connected at `unixMS`, and their kind as identified then.
    func touch(_ address: BluetoothAddress, kind: String?, at unixMS: Int64) async throws
}
