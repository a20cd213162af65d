// SPDX-License-Identifier: GPL-2.0-or-later
import LinkKit

extension NordicDFUUpdater {
    /// The address a Nordic Secure DFU bootloader without bonds advertises with: the
    /// application's, its last byte + 1 (it must not be taken for the glasses BlueZ knows).
    public static func bootloaderAddress(of address: BluetoothAddress) -> BluetoothAddress? {
        var bytes = address.description.split(separator: ":").compactMap { UInt8($0, radix: 16) }
        guard bytes.count == 6 else { return nil }
        bytes[5] &+= 1
        let hex = Array("0123456789ABCDEF")
        return BluetoothAddress(bytes.map { String([hex[Int($0 >> 4)], hex[Int($0 & 15)]]) }.joined(separator: ":"))
    }
}
