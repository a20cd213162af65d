// SPDX-License-Identifier: GPL-2.0-or-later

/// What a link needs from the glasses' GATT database: channels, each a characteristic the host
/// writes and, for most, one it gets notifications from. Each kind of glasses has its profile
/// (with its protocol), the DFU bootloader one here; the link code serves them all.
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
        /// A channel only some firmware offers (Halo's speaker or update service): the link opens
        /// without it, and `GlassesLink.channel(_:)` answers nil for it.
        public var optional: Bool

        public init(
            name: String, service: String, write: String, notify: String?, framing: ChannelFraming,
            writeWithResponse: Bool = false, optional: Bool = false
        ) {
            self.name = name
            self.service = service
            self.write = write
            self.notify = notify
            self.framing = framing
            self.writeWithResponse = writeWithResponse
            self.optional = optional
        }
    }

    public var name: String
    public var channels: [Channel]
    /// Every write, on whichever channel, must reach the device in the order it was made (DFU: a
    /// checksum request on the control point must not overtake the packets before it), so all go
    /// through one path, D-Bus. Otherwise a channel written without response may use a socket.
    public var orderedWrites: Bool

    public init(name: String, channels: [Channel], orderedWrites: Bool = false) {
        self.name = name
        self.channels = channels
        self.orderedWrites = orderedWrites
    }
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
        ], orderedWrites: true)
}

/// The DFU profile's channel names.
public enum DFUChannel {
    public static let control = "control"
    public static let packet = "packet"
}

/// The Nordic Secure DFU service of the glasses' bootloaders (Monocle and Frame; monocle-protocol.md §5.2).
public enum NordicDFUUUID {
    public static let service = "0000fe59-0000-1000-8000-00805f9b34fb"
    public static let controlPoint = "8ec90001-f315-4f60-9fb8-838830daea50"
    public static let packet = "8ec90002-f315-4f60-9fb8-838830daea50"
    /// What the bootloader advertises as its name (the docs also spell it DFUTarg).
    public static let name = "DfuTarg"
}
