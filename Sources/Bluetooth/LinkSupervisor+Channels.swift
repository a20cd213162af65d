// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import GlassdCore
import Glibc
import Logging

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
                // Registered before anything is acquired, so the error path closes whatever was.
                acquired.append(SocketLoop.Channel())
                var notify: AsyncStream<[UInt8]>?
                var writeMTU = pair.rx.mtu
                if settings.acquireSockets, snapshot.offers(pair.tx.path, "NotifyAcquired"),
                    let (fd, _) = try await acquire(pair.tx.path, "AcquireNotify")
                {
                    let (stream, continuation) = AsyncStream.makeStream(of: [UInt8].self, bufferingPolicy: notificationBuffer)
                    acquired[index].notifyFD = fd
                    acquired[index].incoming = continuation
                    notify = stream
                } else {
                    notify = nil
                    notifyPaths.append(pair.tx.path)
                }
                if settings.acquireSockets, snapshot.offers(pair.rx.path, "WriteAcquired"),
                    let (fd, mtu) = try await acquire(pair.rx.path, "AcquireWrite")
                {
                    acquired[index].writeFD = fd
                    writeMTU = mtu
                }
                plans.append((acquired[index].writeFD == nil ? nil : index, writeMTU, notify))
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
            guard reply.count == 2, case .unixFD(let fd) = reply[0], fd >= 0, let mtu = reply[1].int64 else {
                for case .unixFD(let fd) in reply where fd >= 0 { Glibc.close(fd) }
                return nil
            }
            return (fd, Int(mtu))
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
