// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import Glibc
import LinkKit
import Logging

extension LinkSupervisor {
    /// The channels of `profile` on `device`: sockets where BlueZ offers them, D-Bus otherwise. An
    /// optional channel the device does not offer is left out.
    func openChannels(_ device: String, profile: GATTProfile) async throws -> BlueZLink {
        let snapshot = client.state.snapshot
        var found: [(rx: (path: String, mtu: Int), tx: (path: String, mtu: Int)?)] = []
        var specs: [GATTProfile.Channel] = []
        for channel in profile.channels {
            let t = channel.notify.flatMap { snapshot.characteristic(device, uuid: $0) }
            guard let r = snapshot.characteristic(device, uuid: channel.write), channel.notify == nil || t != nil else {
                if channel.optional { continue }
                throw LinkError.failed("the device does not offer the \(profile.name) \(channel.name) channel")
            }
            found.append((r, t))
            specs.append(channel)
        }
        var acquired: [SocketLoop.Channel] = []
        var plans: [(socketWriter: Bool, writeMTU: Int, inbox: PacketInbox?)] = []
        var notifyPaths: [String] = []
        do {
            for (index, pair) in found.enumerated() {
                // Registered before anything is acquired, so the error path closes whatever was.
                acquired.append(SocketLoop.Channel())
                var inbox: PacketInbox?
                var writeMTU = pair.rx.mtu
                if let tx = pair.tx {
                    if settings.acquireSockets, snapshot.offers(tx.path, "NotifyAcquired"),
                        let (fd, _) = try await acquire(tx.path, "AcquireNotify")
                    {
                        inbox = PacketInbox()
                        acquired[index].notifyFD = fd
                        acquired[index].inbox = inbox
                    } else {
                        notifyPaths.append(tx.path)
                    }
                } else {
                    inbox = PacketInbox()  // nothing ever comes on a write-only channel
                }
                // An acquired write socket writes without response, on another path into
                // bluetoothd than WriteValue: a channel written with response keeps WriteValue, and
                // so does every channel of a profile whose writes must stay in order (DFU).
                if settings.acquireSockets, !profile.orderedWrites, !specs[index].writeWithResponse,
                    snapshot.offers(pair.rx.path, "WriteAcquired"),
                    let (fd, mtu) = try await acquire(pair.rx.path, "AcquireWrite")
                {
                    acquired[index].writeFD = fd
                    writeMTU = mtu
                }
                plans.append((acquired[index].writeFD != nil, writeMTU, inbox))
            }
            // D-Bus notifications: listen before turning them on, so none is missed.
            var valueInboxes = notifyPaths.map { client.state.values(of: $0) }.makeIterator()
            for path in notifyPaths { try await client.call(path, BlueZ.characteristic, "StartNotify") }
            let inboxes = plans.compactMap { $0.inbox ?? valueInboxes.next() }
            let usesSockets = acquired.contains { $0.notifyFD != nil || $0.writeFD != nil }
            let loop = usesSockets ? try SocketLoop(channels: acquired, name: "ble-sockets") : nil
            var channels: [String: BlueZChannel] = [:]
            for (index, spec) in specs.enumerated() {
                let plan = plans[index]
                let writer: BlueZChannel.Writer =
                    if let loop, plan.socketWriter { .socket(loop, channel: index) } else {
                        .writeValue(client, path: found[index].rx.path, withResponse: spec.writeWithResponse)
                    }
                channels[spec.name] = BlueZChannel(
                    writer: writer, mtu: plan.writeMTU, framing: spec.framing, incoming: inboxes[index])
            }
            return BlueZLink(
                profile: profile, channels: channels, sockets: loop, notifyPaths: notifyPaths, state: client.state)
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
