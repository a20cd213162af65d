// SPDX-License-Identifier: GPL-2.0-or-later
import Firmware
import Glasses
import LinkKit

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
    /// Its firmware goes through its Nordic DFU bootloader, its FPGA image over its data channel.
    public static let monocle = GlassesKind(
        names: [.monocle], title: "a Monocle", advertisedService: MonocleUUID.serialService, profile: .monocle, bonds: false,
        updaters: [NordicDFUUpdater(), FPGAUpdater()],
        makeSession: { MonocleSession(scripts: .bundled, clock: ContinuousClock(), logger: $0) },
        bootloaderAddress: NordicDFUUpdater.bootloaderAddress(of:)
    ) {
        $0.serviceUUIDs.contains(MonocleUUID.serialService) || $0.name?.lowercased() == "monocle" ? .monocle : nil
    }
}


extension GlassesKindName {
    public static let monocle = GlassesKindName("monocle")
}

extension AudioFormat {
    /// The Monocle's microphone as Noa records it, and as glassd's scripts listen for the wake phrase: 8 kHz, 8-bit.
    public static let monocle = AudioFormat(sampleRate: 8_000, bits: 8)
}

extension AnswerLayout {
    /// 640x400 with a 24x48 font: 26 columns; 7 of its 8 rows, as Noa uses them.
    public static let monocle = AnswerLayout(columns: 26, lines: 7)
}
