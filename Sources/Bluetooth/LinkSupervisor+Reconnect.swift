// SPDX-License-Identifier: GPL-2.0-or-later
import Concurrency
import DBusKit
import Glasses
import LinkKit
import Logging

/// A connection the reconnect loop holds: the link a session sees, and each radio's own link
/// and BlueZ object under the adapter.
struct BlueZConnection: Sendable {
    struct Radio: Sendable {
        let link: BlueZLink
        let device: String
    }

    let link: any GlassesLink
    let radios: [Radio]
    let adapter: String
    let kind: GlassesKindName

    func close() { for radio in radios { radio.link.close() } }
}

/// BlueZ as the reconnect loop's radio, through the supervisor that owns the BlueZ state.
struct BlueZRadio: LinkRadio {
    let supervisor: LinkSupervisor
    let glasses: PairedGlasses
    func adapterReady() async throws { try await supervisor.adapterReady() }
    func connect(_ address: BluetoothAddress) async throws -> BlueZConnection { try await supervisor.connect(glasses) }
    func seen(_ address: BluetoothAddress) async throws { try await supervisor.seen(glasses) }
}

/// The radio's work: the adapter, connection attempts, and watching for the glasses with
/// discovery filtered to LE and the kinds' services.
extension LinkSupervisor {
    func adapterReady() async throws {
        let name = settings.adapter
        try await client.state.wait { $0.adapterPath(named: name).map($0.isPowered) == true }
    }

    /// One attempt: every radio of the glasses connected in turn, each with its services
    /// resolved and channels open; any failure disconnects those already connected.
    func connect(_ glasses: PairedGlasses) async throws -> BlueZConnection {
        guard let adapter = client.state.snapshot.adapterPath(named: settings.adapter) else {
            throw AttemptFailed(description: "the adapter went away")
        }
        var radios: [BlueZConnection.Radio] = []
        var kind: GlassesKind?
        var kindName: GlassesKindName?
        do {
            for radio in glasses.radios {
                let (connected, identified) = try await connectRadio(radio.address, of: glasses, under: adapter)
                radios.append(connected)
                guard kind == nil || kind?.name == identified.kind.name else {
                    throw AttemptFailed(description: "the radios of the glasses are of different kinds")
                }
                kind = identified.kind
                kindName = kindName ?? identified.name
            }
            guard let kind, kind.radios.count == glasses.radios.count else {
                throw AttemptFailed(description: "the glasses are not made of the radios they were paired with")
            }
        } catch {
            for radio in radios { radio.link.close() }
            for radio in radios { _ = try? await client.call(radio.device, BlueZ.device, "Disconnect") }
            throw error
        }
        guard let kind, let kindName else { throw AttemptFailed(description: "the glasses have no radio") }
        let link: any GlassesLink =
            radios.count == 1
            ? radios[0].link
            : RadioSetLink(profile: kind.profile, radios: zip(glasses.radios, radios).map { ($0.role, $1.link) })
        return BlueZConnection(link: link, radios: radios, adapter: adapter, kind: kindName)
    }

    /// Connects one radio: the device must be known to bluetoothd (seen), then Connect, services
    /// resolved, bonded where its kind needs it, channels open.
    private func connectRadio(_ address: BluetoothAddress, of glasses: PairedGlasses, under adapter: String) async throws
        -> (BlueZConnection.Radio, (kind: GlassesKind, name: GlassesKindName))
    {
        let device = client.state.snapshot.devicePath(adapter, address)
        guard isCurrent(glasses.address) else { throw CancellationError() }
        guard client.state.snapshot.properties(device, BlueZ.device) != nil else {
            throw AttemptFailed(description: "the glasses are not in sight")
        }
        try await client.call(device, BlueZ.device, "Connect", timeoutSeconds: seconds(settings.connectTimeout))
        try await client.state.wait(timeout: settings.connectTimeout) { $0.isResolved(device) }
        do {
            // The kind as BlueZ shows the device now, resolved.
            guard let sighting = client.state.snapshot.sighting(device), let identified = settings.kinds.identify(sighting) else {
                throw AttemptFailed(description: "the device is not glasses glassd knows")
            }
            // Normally bonded at Pair already; BlueZ may have lost the bond since (then the
            // glasses refuse until their bond is reset: bondLost).
            if identified.kind.bonds {
                guard isCurrent(glasses.address) else { throw CancellationError() }
                try await bond(device)
            }
            let link = try await openChannels(device, profile: identified.kind.profile)
            return (BlueZConnection.Radio(link: link, device: device), identified)
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
    func seen(_ glasses: PairedGlasses) async throws {
        guard let adapter = client.state.snapshot.adapterPath(named: settings.adapter) else {
            throw AttemptFailed(description: "the adapter went away")
        }
        let address = glasses.address
        let devices = glasses.radios.map { client.state.snapshot.devicePath(adapter, $0.address) }
        let bootloaders = bootloaderAddresses(of: glasses).map { client.state.snapshot.devicePath(adapter, $0) }
        defer { bootloaderSighted.set(false) }
        try await withDiscovery(adapter) {
            try await withThrowingTaskGroup(of: Bool.self) { group in
                group.addTask {
                    try await self.client.state.wait { snapshot in
                        !snapshot.isPowered(adapter) || devices.allSatisfy { snapshot.properties($0, BlueZ.device)?["RSSI"] != nil }
                    }
                    return true
                }
                if !bootloaders.isEmpty {
                    group.addTask {
                        try await self.client.state.wait { snapshot in
                            bootloaders.contains { snapshot.properties($0, BlueZ.device)?["RSSI"] != nil }
                        }
                        return false
                    }
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

    /// Where the bootloader of `glasses` would advertise: by their kind, or for a pairing whose
    /// kind is not known yet, wherever any kind's bootloader would.
    func bootloaderAddresses(of glasses: PairedGlasses) -> [BluetoothAddress] {
        let kinds = glasses.kind.flatMap { settings.kinds.kind(named: GlassesKindName($0)) }.map { [$0] } ?? settings.kinds
        var seen = Set<BluetoothAddress>()
        return kinds.compactMap { $0.bootloaderAddress(glasses.address) }.filter { seen.insert($0).inserted }
    }

    /// The state's reason while only the paired glasses' bootloader is in sight.
    public static let inBootloader =
        "The glasses are in their bootloader: glassctl update --firmware FILE brings them back."

    /// Thrown when an attempt cannot go on (the glasses are not in sight, the adapter went away).
    struct AttemptFailed: Error, CustomStringConvertible {
        var description: String
    }

    /// Connects and reconnects `glasses` until cancelled.
    func superviseLoop(_ glasses: PairedGlasses) async {
        let address = glasses.address
        let loop = ReconnectLoop(radio: BlueZRadio(supervisor: self, glasses: glasses), clock: ContinuousClock(), policy: settings.reconnect)
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
            connection.close()
            return nil
        }
        if connectedOnce == address { reconnectCount += 1 }
        connectedOnce = address
        bondRefusal = nil
        self.link = connection
        generation += 1
        let current = generation
        setState(.connected)
        linkEvents.publish(.up(link, generation: current))
        await learnKind(connection.kind, of: address)
        let drop = await waitForDrop(connection)
        connection.close()
        self.link = nil
        linkEvents.publish(.down(generation: current, reason: drop?.reason ?? "released"))
        guard let drop, isCurrent(address) else { return nil }
        logger.notice("link lost: \(drop.reason)", metadata: ["device": "\(address)"])
        // The radios are reconnected together: one still connected is let go too.
        for radio in connection.radios where drop.disconnect || connection.radios.count > 1 {
            if drop.disconnect || client.state.snapshot.isConnected(radio.device) {
                _ = try? await client.call(radio.device, BlueZ.device, "Disconnect")
            }
        }
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

    /// Waits until the link drops: BlueZ says a radio or the adapter went, or an acquired socket
    /// reports EOF or an error. nil when the wait was cancelled (unpair, shutdown).
    private func waitForDrop(_ connection: BlueZConnection) async -> Drop? {
        let adapter = connection.adapter
        let devices = connection.radios.map(\.device)
        return await withTaskGroup(of: Drop?.self) { group in
            group.addTask {
                do {
                    try await self.client.state.wait { snapshot in
                        !snapshot.isPowered(adapter) || devices.contains { !snapshot.isConnected($0) }
                    }
                    return Drop(reason: "disconnected", disconnect: false)
                } catch {
                    return nil
                }
            }
            for radio in connection.radios {
                group.addTask {
                    await radio.link.socketsLost()
                    return Task.isCancelled ? nil : Drop(reason: "the link's socket closed", disconnect: true)
                }
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }
}
