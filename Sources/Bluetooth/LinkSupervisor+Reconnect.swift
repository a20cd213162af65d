// SPDX-License-Identifier: GPL-2.0-or-later
import Concurrency
import DBusKit
import Glasses
import LinkKit
import Logging

/// A connection the reconnect loop holds: the link and the BlueZ objects it runs on.
struct BlueZConnection: Sendable {
    let link: BlueZLink
    let adapter: String
    let device: String
}

/// BlueZ as the reconnect loop's radio, through the supervisor that owns the BlueZ state.
struct BlueZRadio: LinkRadio {
    let supervisor: LinkSupervisor
    func adapterReady() async throws { try await supervisor.adapterReady() }
    func connect(_ address: BluetoothAddress) async throws -> BlueZConnection { try await supervisor.connect(address) }
    func seen(_ address: BluetoothAddress) async throws { try await supervisor.seen(address) }
}

/// The radio's work: the adapter, connection attempts, and watching for the glasses with
/// discovery filtered to LE and the Monocle's service.
extension LinkSupervisor {
    func adapterReady() async throws {
        let name = settings.adapter
        try await client.state.wait { $0.adapterPath(named: name).map($0.isPowered) == true }
    }

    /// One attempt: the device must be known to bluetoothd (seen), then Connect, services resolved,
    /// channels open.
    func connect(_ address: BluetoothAddress) async throws -> BlueZConnection {
        guard let adapter = client.state.snapshot.adapterPath(named: settings.adapter) else {
            throw AttemptFailed(description: "the adapter went away")
        }
        let device = client.state.snapshot.devicePath(adapter, address)
        guard isCurrent(address) else { throw CancellationError() }
        guard client.state.snapshot.properties(device, BlueZ.device) != nil else {
            throw AttemptFailed(description: "the glasses are not in sight")
        }
        try await client.call(device, BlueZ.device, "Connect", timeoutSeconds: seconds(settings.connectTimeout))
        try await client.state.wait(timeout: settings.connectTimeout) { $0.isResolved(device) }
        do {
            // The kind as BlueZ shows the device now, resolved.
            guard let sighting = client.state.snapshot.sighting(device), let kind = settings.kinds.identify(sighting)?.kind else {
                throw AttemptFailed(description: "the device is not glasses glassd knows")
            }
            // Normally bonded at Pair already; BlueZ may have lost the bond since (then the
            // glasses refuse until their bond is reset: bondLost).
            if kind.bonds {
                guard isCurrent(address) else { throw CancellationError() }
                try await bond(device)
            }
            let link = try await openChannels(device, profile: kind.profile)
            return BlueZConnection(link: link, adapter: adapter, device: device)
        } catch {
            _ = try? await client.call(device, BlueZ.device, "Disconnect")
            throw error
        }
    }

    /// Discovery on (shared, filtered) until bluetoothd reports the glasses advertising: its
    /// Device1 is there with an RSSI (bluetoothd clears RSSI when discovery stops and drops the
    /// object of unbonded devices it has not seen for TemporaryTimeout).
    /// Meanwhile, glasses seen in their bootloader instead (an update left them there) are said
    /// in the state's reason, with what brings them back.
    func seen(_ address: BluetoothAddress) async throws {
        guard let adapter = client.state.snapshot.adapterPath(named: settings.adapter) else {
            throw AttemptFailed(description: "the adapter went away")
        }
        let device = client.state.snapshot.devicePath(adapter, address)
        let bootloader = client.state.snapshot.devicePath(adapter, address.bootloader)
        defer { bootloaderSighted.set(false) }
        try await withDiscovery(adapter) {
            try await withThrowingTaskGroup(of: Bool.self) { group in
                group.addTask {
                    try await self.client.state.wait { snapshot in
                        !snapshot.isPowered(adapter) || snapshot.properties(device, BlueZ.device)?["RSSI"] != nil
                    }
                    return true
                }
                group.addTask {
                    try await self.client.state.wait { $0.properties(bootloader, BlueZ.device)?["RSSI"] != nil }
                    return false
                }
                while let appeared = try await group.next() {
                    if appeared { break }
                    if isCurrent(address) {
                        logger.notice("the glasses are in their bootloader", metadata: ["device": "\(address)"])
                        setState(.disconnected, reason: Self.inBootloader)
                        bootloaderSighted.set(true)
                    }
                }
                group.cancelAll()
            }
        }
    }

    /// The state's reason while only the paired glasses' bootloader is in sight.
    public static let inBootloader =
        "The glasses are in their bootloader: glassctl update --firmware FILE brings them back."

    /// Thrown when an attempt cannot go on (the glasses are not in sight, the adapter went away).
    struct AttemptFailed: Error, CustomStringConvertible {
        var description: String
    }

    /// Connects and reconnects `address` until cancelled.
    func superviseLoop(_ address: BluetoothAddress) async {
        let loop = ReconnectLoop(radio: BlueZRadio(supervisor: self), clock: ContinuousClock(), policy: settings.reconnect)
        await loop.run(address) { step in
            await self.observe(step, address)
        } connected: { connection in
            await self.hold(connection, address)
        }
    }

    private func observe(_ step: ReconnectLoop<BlueZRadio, ContinuousClock>.Step, _ address: BluetoothAddress) {
        guard isCurrent(address) else { return }
        switch step {
        case .waiting:
            setState(.disconnected, reason: bondRefusal ?? "Waiting for the glasses to come into range.")
        case .connecting(let reconnect):
            setState(.connecting, reason: reconnect ? "Reconnecting." : "Connecting.")
        case .failed(let error):
            logger.info("connecting failed, watching for the glasses: \(error)", metadata: ["device": "\(address)"])
            bondRefusal = error == LinkError.bondLost.message ? error : nil
        }
    }

    /// Holds one link until it ends; nil when supervision stops (unpair, shutdown).
    private func hold(_ connection: BlueZConnection, _ address: BluetoothAddress) async -> LinkEnd? {
        let link = connection.link
        guard isCurrent(address) else {
            link.close()
            return nil
        }
        if connectedOnce == address { reconnectCount += 1 }
        connectedOnce = address
        bondRefusal = nil
        self.link = link
        generation += 1
        let current = generation
        setState(.connected)
        linkEvents.publish(.up(link, generation: current))
        try? await store.touch(address, at: unixMS())
        let drop = await waitForDrop(link, adapter: connection.adapter, device: connection.device)
        link.close()
        self.link = nil
        linkEvents.publish(.down(generation: current, reason: drop?.reason ?? "released"))
        guard let drop, isCurrent(address) else { return nil }
        logger.notice("link lost: \(drop.reason)", metadata: ["device": "\(address)"])
        if drop.disconnect { _ = try? await client.call(connection.device, BlueZ.device, "Disconnect") }
        setState(.disconnected, reason: "Reconnecting.")
        if let rejected = rejection {
            rejection = nil
            return .rejected(rejected)
        }
        return .dropped(drop.reason)
    }

    /// Why a link ended; `disconnect`: BlueZ may still think it connected, so drop it there too.
    struct Drop {
        var reason: String
        var disconnect: Bool
    }

    /// Waits until the link drops: BlueZ says the device or adapter went, or an acquired socket
    /// reports EOF or an error. nil when the wait was cancelled (unpair, shutdown).
    private func waitForDrop(_ link: BlueZLink, adapter: String, device: String) async -> Drop? {
        await withTaskGroup(of: Drop?.self) { group in
            group.addTask {
                do {
                    try await self.client.state.wait { snapshot in
                        !snapshot.isPowered(adapter) || !snapshot.isConnected(device)
                    }
                    return Drop(reason: "disconnected", disconnect: false)
                } catch {
                    return nil
                }
            }
            group.addTask {
                await link.socketsLost()
                return Task.isCancelled ? nil : Drop(reason: "the link's socket closed", disconnect: true)
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }
}
