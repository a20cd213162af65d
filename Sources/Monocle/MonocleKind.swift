// SPDX-License-Identifier: GPL-2.0-or-later
import GlassdCore
import Glasses

/// The Monocle's GATT services: the host writes RX and gets notifications on TX.
public enum MonocleUUID {
    public static let serialService = "6e400001-b5a3-f393-e0a9-e50e24dcca9e"
    public static let serialRX = "6e400002-b5a3-f393-e0a9-e50e24dcca9e"
    public static let serialTX = "6e400003-b5a3-f393-e0a9-e50e24dcca9e"
    public static let dataService = "e5700001-7bac-429a-b4ce-57ff900f479d"
    public static let dataRX = "e5700002-7bac-429a-b4ce-57ff900f479d"
    public static let dataTX = "e5700003-7bac-429a-b4ce-57ff900f479d"

}

/// The Monocle profile's channel names.
public enum MonocleChannel {
    public static let serial = "serial"
    public static let data = "data"
}

extension GATTProfile {
    /// The Monocle application firmware: the REPL streams, the data channel carries messages.
    public static let monocle = GATTProfile(
        name: "monocle",
        channels: [
            Channel(
                name: MonocleChannel.serial, service: MonocleUUID.serialService, write: MonocleUUID.serialRX,
                notify: MonocleUUID.serialTX, framing: .stream),
            Channel(
                name: MonocleChannel.data, service: MonocleUUID.dataService, write: MonocleUUID.dataRX,
                notify: MonocleUUID.dataTX, framing: .packets),
        ])
}

extension GlassesKind {
    /// A Monocle advertises the serial service, or at least its name; it needs no bond.
    public static let monocle = GlassesKind(
        advertisedService: MonocleUUID.serialService, profile: .monocle, bonds: false,
        makeSession: { MonocleSession(scripts: .bundled, clock: ContinuousClock(), logger: $0) }
    ) {
        $0.serviceUUIDs.contains(MonocleUUID.serialService) || $0.name?.lowercased() == "monocle" ? .monocle : nil
    }
}

