// SPDX-License-Identifier: GPL-2.0-or-later
import Concurrency
import DBusKit
import Glibc
import LinkKit
import Logging

/// One channel of a link over BlueZ. Writes go in packets of at most MTU − 3 bytes, through the
/// AcquireWrite socket where BlueZ offers one, else as WriteValue (type command, or request where
/// the device must answer each write, as the DFU control point); notifications come
/// from the AcquireNotify socket, else as PropertiesChanged(Value) after StartNotify.
final class BlueZChannel: ByteChannel {
    enum Writer: Sendable {
        case writeValue(BlueZClient, path: String, withResponse: Bool)
        case socket(SocketLoop, channel: Int)
    }

    let writer: Writer
    let maxPacketSize: Int
    let framing: ChannelFraming
    let incoming: PacketInbox
    /// One write at a time, so two writers' packets never interleave (the socket path queues).
    private let gate = AsyncGate()

    init(writer: Writer, mtu: Int, framing: ChannelFraming, incoming: PacketInbox) {
        self.writer = writer
        self.maxPacketSize = max(20, mtu - 3)
        self.framing = framing
        self.incoming = incoming
    }

    func write(_ bytes: [UInt8]) async throws {
        guard !bytes.isEmpty else { return }
        if framing == .packets && bytes.count > maxPacketSize {
            throw ChannelError.tooLong(size: bytes.count, limit: maxPacketSize)
        }
        var packets: [[UInt8]] = []
        var offset = 0
        repeat {
            let end = min(offset + maxPacketSize, bytes.count)
            packets.append(Array(bytes[offset..<end]))
            offset = end
        } while offset < bytes.count
        switch writer {
        case .socket(let loop, let channel):
            try await loop.write(channel: channel, packets: packets)
        case .writeValue(let client, let path, let withResponse):
            let type = DBusValue.string(withResponse ? "request" : "command")
            try await gate.withLock(isolation: nil) {
                for packet in packets {
                    try Task.checkCancellation()
                    try await client.call(path, BlueZ.characteristic, "WriteValue", [.bytes(packet), .vardict(["type": type])])
                }
            }
        }
    }
}

/// A connected device: the channels of its profile, and what to release when it goes.
public final class BlueZLink: GlassesLink {
    public let profile: GATTProfile
    let channels: [String: BlueZChannel]
    private let sockets: SocketLoop?
    private let notifyPaths: [String]
    private let state: BlueZState

    init(profile: GATTProfile, channels: [String: BlueZChannel], sockets: SocketLoop?, notifyPaths: [String], state: BlueZState) {
        self.profile = profile
        self.channels = channels
        self.sockets = sockets
        self.notifyPaths = notifyPaths
        self.state = state
    }

    public func channel(_ name: String) -> (any ByteChannel)? { channels[name] }

    /// Returns when an acquired socket shows the link is gone (EOF, error), or when the waiting
    /// task is cancelled. Without sockets only BlueZ's Connected property tells, so it just waits.
    func socketsLost() async {
        await (sockets?.lost ?? OneShotEvent()).wait()
    }

    /// Ends the inboxes and releases acquired sockets (the link dropped or was released).
    func close() {
        sockets?.close()
        for path in notifyPaths { state.stopValues(path) }
    }
}
