// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import GlassdCore
import Glibc
import Logging

/// One Monocle service over BlueZ. Writes go in pieces of MTU − 3 bytes, through the
/// AcquireWrite socket where BlueZ offers one, else as WriteValue(type command); notifications come
/// from the AcquireNotify socket, else as PropertiesChanged(Value) after StartNotify.
final class BlueZChannel: ByteChannel {
    enum Writer: Sendable {
        case writeValue(BlueZClient, path: String)
        case socket(SocketLoop, channel: Int)
    }

    let writer: Writer
    let chunkSize: Int
    let incoming: AsyncStream<[UInt8]>

    init(writer: Writer, mtu: Int, incoming: AsyncStream<[UInt8]>) {
        self.writer = writer
        self.chunkSize = max(20, mtu - 3)
        self.incoming = incoming
    }

    func write(_ bytes: [UInt8]) async throws {
        var pieces: [[UInt8]] = []
        var offset = 0
        repeat {
            let end = min(offset + chunkSize, bytes.count)
            pieces.append(Array(bytes[offset..<end]))
            offset = end
        } while offset < bytes.count
        switch writer {
        case .socket(let loop, let channel):
            try await loop.write(channel: channel, packets: pieces)
        case .writeValue(let client, let path):
            for piece in pieces {
                try await client.call(
                    path, BlueZ.characteristic, "WriteValue", [.bytes(piece), .vardict(["type": .string("command")])])
            }
        }
    }
}

/// A connected Monocle: its serial (REPL) and data channels, and what to release when it goes.
public final class BlueZLink: GlassesLink {
    let serialChannel: BlueZChannel
    let dataChannel: BlueZChannel
    private let sockets: SocketLoop?
    private let notifyPaths: [String]
    private let state: BlueZState
    public var serial: any ByteChannel { serialChannel }
    public var data: any ByteChannel { dataChannel }

    init(serial: BlueZChannel, data: BlueZChannel, sockets: SocketLoop?, notifyPaths: [String], state: BlueZState) {
        serialChannel = serial
        dataChannel = data
        self.sockets = sockets
        self.notifyPaths = notifyPaths
        self.state = state
    }

    /// Ends both incoming streams and releases acquired sockets (the link dropped or was released).
    func close() {
        sockets?.close()
        for path in notifyPaths { state.stopValues(path) }
    }
}

extension LinkSupervisor {
    /// The Monocle's two services on `device`: sockets where BlueZ offers them, D-Bus otherwise.
    func openChannels(_ device: String) async throws -> BlueZLink {
        let snapshot = client.state.snapshot
        let uuids = [(MonocleUUID.serialRX, MonocleUUID.serialTX), (MonocleUUID.dataRX, MonocleUUID.dataTX)]
        var found: [(rx: (path: String, mtu: Int), tx: (path: String, mtu: Int))] = []
        for (rx, tx) in uuids {
            guard let r = snapshot.characteristic(device, uuid: rx), let t = snapshot.characteristic(device, uuid: tx) else {
                throw LinkError.failed("the device does not offer the Monocle services")
            }
            found.append((r, t))
        }
        var acquired: [SocketLoop.Channel] = []
        var plans: [(writer: Int?, writeMTU: Int, notify: AsyncStream<[UInt8]>?)] = []
        var notifyPaths: [String] = []
        do {
            for (index, pair) in found.enumerated() {
                var channel = SocketLoop.Channel()
                var notify: AsyncStream<[UInt8]>?
                var writeMTU = pair.rx.mtu
                if settings.acquireSockets, snapshot.offers(pair.tx.path, "NotifyAcquired"),
                    let (fd, _) = try await acquire(pair.tx.path, "AcquireNotify")
                {
                    let (stream, continuation) = AsyncStream.makeStream(of: [UInt8].self)
                    channel.notifyFD = fd
                    channel.incoming = continuation
                    notify = stream
                } else {
                    notify = nil
                    notifyPaths.append(pair.tx.path)
                }
                if settings.acquireSockets, snapshot.offers(pair.rx.path, "WriteAcquired"),
                    let (fd, mtu) = try await acquire(pair.rx.path, "AcquireWrite")
                {
                    channel.writeFD = fd
                    writeMTU = mtu
                }
                plans.append((channel.writeFD == nil ? nil : index, writeMTU, notify))
                acquired.append(channel)
            }
            // D-Bus notifications: listen before turning them on, so none is missed.
            let valueStreams = notifyPaths.map { client.state.values(of: $0) }
            for path in notifyPaths { try await client.call(path, BlueZ.characteristic, "StartNotify") }
            let usesSockets = acquired.contains { $0.notifyFD != nil || $0.writeFD != nil }
            let loop = usesSockets ? SocketLoop(channels: acquired, name: "ble-sockets") : nil
            var streams = valueStreams.makeIterator()
            let channels = found.enumerated().map { index, pair in
                let plan = plans[index]
                let writer: BlueZChannel.Writer =
                    if let loop, plan.writer != nil { .socket(loop, channel: index) } else {
                        .writeValue(client, path: pair.rx.path)
                    }
                return BlueZChannel(writer: writer, mtu: plan.writeMTU, incoming: plan.notify ?? streams.next()!)
            }
            return BlueZLink(
                serial: channels[0], data: channels[1], sockets: loop, notifyPaths: notifyPaths, state: client.state)
        } catch {
            for channel in acquired {
                for fd in [channel.notifyFD, channel.writeFD].compactMap({ $0 }) { Glibc.close(fd) }
            }
            for path in notifyPaths { client.state.stopValues(path) }
            throw error
        }
    }

    /// AcquireNotify/AcquireWrite: the socket and its MTU, or nil if BlueZ declined.
    private func acquire(_ path: String, _ method: String) async throws -> (Int32, Int)? {
        do {
            let reply = try await client.call(path, BlueZ.characteristic, method, [.vardict([:])])
            guard reply.count == 2, case .unixFD(let fd) = reply[0], fd >= 0 else { return nil }
            return (fd, reply[1].int64.map(Int.init) ?? 23)
        } catch let error as BusError where error.name.hasPrefix("org.bluez.Error") || error.name.hasSuffix("UnknownMethod") {
            logger.debug("\(method) declined, using D-Bus: \(error)")
            return nil
        }
    }
}

extension BlueZState.Snapshot {
    /// Whether the characteristic has the property (NotifyAcquired, WriteAcquired): BlueZ offers the socket.
    func offers(_ path: String, _ property: String) -> Bool {
        properties(path, BlueZ.characteristic)?[property] != nil
    }
}
