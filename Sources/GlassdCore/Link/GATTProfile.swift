// SPDX-License-Identifier: GPL-2.0-or-later

/// What a link needs from the glasses' GATT database: channels, each a characteristic the host
/// writes and one it gets notifications from. The Monocle application and (in the updates issue)
/// the DFU bootloader are two profiles on the same link code.
public struct GATTProfile: Sendable, Equatable {
    public struct Channel: Sendable, Equatable {
        public var name: String
        public var service: String
        public var write: String
        public var notify: String
        public var framing: ChannelFraming

        public init(name: String, service: String, write: String, notify: String, framing: ChannelFraming) {
            self.name = name
            self.service = service
            self.write = write
            self.notify = notify
            self.framing = framing
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

/// The Monocle profile's channel names.
public enum MonocleChannel {
    public static let serial = "serial"
    public static let data = "data"
}
