// SPDX-License-Identifier: GPL-2.0-or-later
import LinkKit
import Synchronization

/// Pairing kept in memory, for driving the link library directly.
final class MemoryDeviceStore: DeviceStore {
    let glasses = Mutex<PairedGlasses?>(nil)
    func pairedGlasses() async throws -> PairedGlasses? { glasses.withLock { $0 } }
    func savePaired(_ glasses: PairedGlasses, at unixMS: Int64) async throws { self.glasses.withLock { $0 = glasses } }
    func forget(_ address: BluetoothAddress) async throws { glasses.withLock { $0 = nil } }
    func touch(_ address: BluetoothAddress, kind: String?, at unixMS: Int64) async throws {
        glasses.withLock { stored in
            if let kind, stored?.address == address { stored?.kind = kind }
        }
    }
}
