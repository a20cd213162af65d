// SPDX-License-Identifier: GPL-2.0-or-later

/// What a link needs from the glasses' GATT database: channels, each a characteristic the host
/// writes and, for most, one it gets notifications from. The Monocle application and the DFU
/// bootloader are two profiles on the same link code.
public struct GATTProfile: Sendable, Equatable {
    public struct Channel: Sendable, Equatable {
        public var name: String
        public var service: String
        public var write: String
        /// nil: a channel the host only writes (the DFU packet characteristic).
        public var notify: String?
        public var framing: ChannelFraming
        /// Writes wait for the device's response (the DFU control point requires it); else they
        /// are commands, without a response.
        public var writeWithResponse: Bool

        public init(
            name: String, service: String, write: String, notify: String?, framing: ChannelFraming,
            writeWithResponse: Bool = false
        ) {
            self.name = name
            self.service = service
            self.write = write
            self.notify = notify
            self.framing = framing
            self.writeWithResponse = writeWithResponse
        }
    }

    public var name: String
    public var channels: [Channel]

    public init(name: String, channels: [Channel]) {
        self.name = name
        self.channels = channels
    }

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

extension GATTProfile {
    /// The Nordic Secure DFU bootloader (DfuTarg): requests on the control point, whose
    /// notifications carry the responses; object bytes on the packet characteristic.
    public static let nordicDFU = GATTProfile(
        name: "dfu",
        channels: [
            Channel(
                name: DFUChannel.control, service: NordicDFUUUID.service, write: NordicDFUUUID.controlPoint,
                notify: NordicDFUUUID.controlPoint, framing: .packets, writeWithResponse: true),
            Channel(
                name: DFUChannel.packet, service: NordicDFUUUID.service, write: NordicDFUUUID.packet, notify: nil,
                framing: .stream),
        ])
}

/// The DFU profile's channel names.
public enum DFUChannel {
    public static let control = "control"
    public static let packet = "packet"
}

/// The Monocle profile's channel names.
public enum MonocleChannel {
    public static let serial = "serial"
    public static let data = "data"
}
