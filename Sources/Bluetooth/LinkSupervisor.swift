// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import Foundation
import GlassdCore
import Logging

/// Pairs with the glasses, connects, and keeps them connected: reconnecting after drops with
/// capped backoff, through adapter power cycles and bluetoothd restarts, until unpaired.
/// Everything waits on BlueZ's signals; nothing polls.
public actor LinkSupervisor {
    let client: BlueZClient
    let store: any DeviceStore
    let settings: LinkSettings
    let logger: Logger

    private var paired: (address: BluetoothAddress, name: String)?
    private var state: LinkState = .unpaired
    private var reconnectCount: UInt32 = 0
    private var pairing = false
    private var discoveryUsers = 0
    private var link: BlueZLink?
    private let targets: AsyncStream<BluetoothAddress?>.Continuation
    private let targetStream: AsyncStream<BluetoothAddress?>
    private let changes: AsyncStream<LinkSnapshot>.Continuation
    /// Every change of the link's own state, in order, none skipped (BlueZ's own changes tick
    /// `client.state.changes()` instead).
    public nonisolated let changeStream: AsyncStream<LinkSnapshot>

    public init(client: BlueZClient, store: any DeviceStore, settings: LinkSettings, logger: Logger) {
        self.client = client
        self.store = store
        self.settings = settings
        self.logger = logger
        (targetStream, targets) = AsyncStream.makeStream(of: BluetoothAddress?.self)
        (changeStream, changes) = AsyncStream.makeStream(of: LinkSnapshot.self)
    }

    // MARK: What the D-Bus side reads

    public func snapshot() -> LinkSnapshot {
        let bluez = client.state.snapshot
        var devices: [LinkSnapshot.Device] = []
        if let adapter = bluez.adapterPath(named: settings.adapter) {
            for seen in bluez.monocles(under: adapter) {
                let mine = seen.address == paired?.address
                let connected = mine && state == .connected
                devices.append(
                    .init(
                        address: seen.address, name: seen.name, rssi: seen.rssi, connected: connected,
                        state: mine ? state : .unpaired, reconnectCount: mine ? reconnectCount : 0))
            }
        }
        if let paired, !devices.contains(where: { $0.address == paired.address }) {
            devices.append(
                .init(
                    address: paired.address, name: paired.name, rssi: Int16.min, connected: false, state: state,
                    reconnectCount: reconnectCount))
        }
        return LinkSnapshot(state: state, paired: paired?.address, devices: devices)
    }

    /// The connected glasses, if any.
    public var currentLink: (any GlassesLink)? { link }

    private func setState(_ new: LinkState) {
        guard state != new else { return }
        logger.info("link \(new.rawValue)", metadata: ["device": "\(paired?.address.description ?? "-")"])
        state = new
        changes.yield(snapshot())
    }

    // MARK: Requests

    /// Pairs with `address`, or with the strongest Monocle in range when it is empty.
    public func pair(_ address: String) async throws(LinkError) -> BluetoothAddress {
        var wanted: BluetoothAddress?
        if !address.isEmpty {
            guard let parsed = BluetoothAddress(address) else {
                throw .invalidAddress("\"\(address)\" is not a Bluetooth address like AA:BB:CC:DD:EE:FF.")
            }
            wanted = parsed
        }
        if let paired {
            if paired.address == wanted { return paired.address }
            throw .alreadyPaired("Already paired with \(paired.address); unpair first.")
        }
        guard !pairing else { throw .busy("A pairing is already in progress.") }
        pairing = true
        defer { pairing = false }
        let adapter = try adapterPath()
        let found = try await find(wanted, under: adapter)
        if paired != nil { throw .alreadyPaired("Paired meanwhile; unpair first.") }
        do {
            try await store.savePaired(found.address, name: found.name, at: Int64(Date().timeIntervalSince1970 * 1000))
        } catch {
            throw .failed("The pairing could not be saved.")
        }
        paired = (found.address, found.name)
        reconnectCount = 0
        logger.notice("paired", metadata: ["device": "\(found.address)", "rssi": "\(found.rssi)"])
        setState(.disconnected)
        targets.yield(found.address)
        return found.address
    }

    /// Forgets the glasses: disconnects and stops reconnecting at once.
    public func unpair() async throws(LinkError) {
        guard let paired else { throw .notPaired("No glasses are paired.") }
        self.paired = nil
        targets.yield(nil)
        do {
            try await store.forget(paired.address)
        } catch {
            logger.error("cannot forget \(paired.address) in the database: \(error)")
        }
        logger.notice("unpaired", metadata: ["device": "\(paired.address)"])
        setState(.unpaired)
    }

    /// Monocles seen within `seconds`, strongest first.
    public func scan(seconds: UInt32) async throws(LinkError) -> [ScanResult] {
        let adapter = try adapterPath()
        if seconds > 0 {
            try await withDiscovery(adapter) {
                try? await Task.sleep(for: .seconds(min(seconds, 60)))
            }
        }
        return ScanResult.strongestFirst(client.state.snapshot.monocles(under: adapter))
    }

    private func adapterPath() throws(LinkError) -> String {
        guard let path = client.state.snapshot.adapterPath(named: settings.adapter) else {
            let which = settings.adapter.map { "Bluetooth adapter \($0)" } ?? "powered Bluetooth adapter"
            throw .noAdapter("No \(which) found.")
        }
        return path
    }

    /// Scans for `wanted` (or any Monocle, then keeps looking a moment for stronger ones).
    private func find(_ wanted: BluetoothAddress?, under adapter: String) async throws(LinkError) -> ScanResult {
        let matches: @Sendable (BlueZState.Snapshot) -> Bool = { snapshot in
            let seen = snapshot.monocles(under: adapter)
            return wanted.map { w in seen.contains { $0.address == w } } ?? !seen.isEmpty
        }
        try await withDiscovery(adapter) {
            do {
                try await client.state.wait(timeout: settings.scanTimeout, until: matches)
            } catch {
                return
            }
            if wanted == nil { try? await Task.sleep(for: settings.scanSettle) }
        }
        let seen = ScanResult.strongestFirst(client.state.snapshot.monocles(under: adapter))
        if let wanted {
            if let device = seen.first(where: { $0.address == wanted }) { return device }
            throw .notFound("No Monocle \(wanted) in range.")
        }
        guard let strongest = seen.first else { throw .notFound("No Monocle in range.") }
        return strongest
    }

    /// Runs `body` while discovery is on (shared by everyone who needs it).
    private func withDiscovery(_ adapter: String, _ body: () async -> Void) async throws(LinkError) {
        discoveryUsers += 1
        if discoveryUsers == 1 {
            do {
                try await client.call(
                    adapter, BlueZ.adapter, "SetDiscoveryFilter",
                    [.vardict(["Transport": .string("le"), "UUIDs": .array(element: "s", [.string(MonocleUUID.serialService)])])])
                try await client.call(adapter, BlueZ.adapter, "StartDiscovery")
            } catch let error as BusError where error.name == "org.bluez.Error.InProgress" {
                // Someone else's discovery is running: it serves us too.
            } catch {
                discoveryUsers -= 1
                throw .failed("Cannot scan: \(error)")
            }
        }
        await body()
        discoveryUsers -= 1
        if discoveryUsers == 0 {
            _ = try? await client.call(adapter, BlueZ.adapter, "StopDiscovery")
        }
    }

    // MARK: Supervision

    /// Supervises the paired device until the service ends; starts with the stored pairing.
    public func run() async {
        do {
            if let stored = try await store.pairedDevice() {
                paired = stored
                setState(.disconnected)
            }
        } catch {
            logger.error("cannot read the paired device: \(error)")
        }
        var target = paired?.address
        while !Task.isCancelled {
            guard let address = target else {
                var next: BluetoothAddress?? = nil
                for await t in targetStream {
                    next = .some(t)
                    break
                }
                guard let next else { return }
                target = next
                continue
            }
            let change: BluetoothAddress?? = await withTaskGroup(of: BluetoothAddress??.self) { group in
                group.addTask {
                    await self.supervise(address)
                    return .none
                }
                group.addTask {
                    for await t in self.targetStream { return .some(t) }
                    return .none
                }
                let first = await group.next() ?? .none
                group.cancelAll()
                return first
            }
            guard let change else { return }
            target = change
        }
    }

    /// Connects and reconnects `address` until cancelled.
    private func supervise(_ address: BluetoothAddress) async {
        var backoff = settings.backoff
        var everConnected = false
        while !Task.isCancelled {
            do {
                let link = try await connect(address)
                if everConnected { reconnectCount += 1 }
                everConnected = true
                self.link = link
                setState(.connected)
                let start = ContinuousClock.now
                let lost = await waitForDrop(address)
                link.close()
                self.link = nil
                backoff.connectionEnded(after: ContinuousClock.now - start)
                if !lost { break }
                logger.notice("link lost", metadata: ["device": "\(address)"])
                setState(.disconnected)
            } catch is CancellationError {
                break
            } catch {
                logger.info("connecting failed, will retry: \(error)", metadata: ["device": "\(address)"])
                setState(.disconnected)
            }
            do {
                try await Task.sleep(for: backoff.next())
            } catch {
                break
            }
        }
        await release(address)
    }

    /// One connection attempt: adapter up, device found, connected, services resolved, notifying.
    private func connect(_ address: BluetoothAddress) async throws -> BlueZLink {
        let name = settings.adapter
        try await client.state.wait { $0.adapterPath(named: name).map($0.isPowered) == true }
        guard let adapter = client.state.snapshot.adapterPath(named: name) else { throw CancellationError() }
        let device = client.state.snapshot.devicePath(adapter, address)
        setState(.connecting)
        if client.state.snapshot.properties(device, BlueZ.device) == nil {
            // Not known to bluetoothd (restarted, or never seen): look for it.
            var found = false
            try await withDiscovery(adapter) {
                found = (try? await client.state.wait(timeout: settings.connectTimeout) {
                    $0.properties(device, BlueZ.device) != nil
                }) != nil
            }
            guard found else { throw LinkError.notFound("\(address) is not in range") }
        }
        try await client.call(device, BlueZ.device, "Connect", timeoutSeconds: seconds(settings.connectTimeout))
        try await client.state.wait(timeout: settings.connectTimeout) { $0.isResolved(device) }
        do {
            return try await openChannels(device)
        } catch {
            _ = try? await client.call(device, BlueZ.device, "Disconnect")
            throw error
        }
    }

    /// Waits until the link drops (true) or the wait is cancelled (false).
    private func waitForDrop(_ address: BluetoothAddress) async -> Bool {
        let name = settings.adapter
        do {
            try await client.state.wait { snapshot in
                guard let adapter = snapshot.adapterPath(named: name), snapshot.isPowered(adapter) else { return true }
                return !snapshot.isConnected(snapshot.devicePath(adapter, address))
            }
            return true
        } catch {
            return false
        }
    }

    /// Supervision ended (unpaired): drop the connection.
    private func release(_ address: BluetoothAddress) async {
        link?.close()
        link = nil
        let snapshot = client.state.snapshot
        guard let adapter = snapshot.adapterPath(named: settings.adapter) else { return }
        let device = snapshot.devicePath(adapter, address)
        if snapshot.isConnected(device) { _ = try? await client.call(device, BlueZ.device, "Disconnect") }
    }

    private func seconds(_ d: Duration) -> Double {
        Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }
}
