// SPDX-License-Identifier: GPL-2.0-or-later

/// The Monocle's GATT services: the host writes RX and gets notifications on TX.
public enum MonocleUUID {
    public static let serialService = "6e400001-b5a3-f393-e0a9-e50e24dcca9e"
    public static let serialRX = "6e400002-b5a3-f393-e0a9-e50e24dcca9e"
    public static let serialTX = "6e400003-b5a3-f393-e0a9-e50e24dcca9e"
    public static let dataService = "e5700001-7bac-429a-b4ce-57ff900f479d"
    public static let dataRX = "e5700002-7bac-429a-b4ce-57ff900f479d"
    public static let dataTX = "e5700003-7bac-429a-b4ce-57ff900f479d"

    /// A Monocle advertises the serial service, or at least its name.
    public static func isMonocle(name: String?, uuids: [String]) -> Bool {
        uuids.contains { $0.lowercased() == serialService } || name?.lowercased() == "monocle"
    }
}

/// The Nordic Secure DFU service of the Monocle's bootloader (monocle-protocol.md §5.2).
public enum NordicDFUUUID {
    public static let service = "0000fe59-0000-1000-8000-00805f9b34fb"
    public static let controlPoint = "8ec90001-f315-4f60-9fb8-838830daea50"
    public static let packet = "8ec90002-f315-4f60-9fb8-838830daea50"
    /// What the bootloader advertises as its name (the docs also spell it DFUTarg).
    public static let name = "DfuTarg"
}
