// SPDX-License-Identifier: GPL-2.0-or-later
import Concurrency
import DBusKit
import Foundation
import Glasses
import LinkKit
import Logging

/// Pairs with the glasses, connects, and keeps them connected: reconnecting after drops with
/// capped backoff, through adapter power cycles and bluetoothd restarts, until unpaired.
/// Everything waits on BlueZ's signals; nothing polls.
public actor LinkSupervisor {
    let client: BlueZClient
    let store: any DeviceStore
    public nonisolated let settings: LinkSettings
    let logger: Logger

    private var paired: (address: BluetoothAddress, name: String)?
    var pairedAddress: BluetoothAddress? { paired?.address }
    private var loaded = false
    private(set) var state: LinkState = .unpaired
    /// Why the link is where it is (waiting for the glasses, reconnecting); empty when connected.
    private(set) var reason = ""
    var reconnectCount: UInt32 = 0
    private var pairing = false
    private var discoveryUsers = 0
    private let discoveryGate = AsyncGate()
    var link: BlueZLink?
    /// Counts links that came up; each `LinkEvent` names its link's generation.
    var generation: UInt64 = 0
    let linkEvents = Broadcast<LinkEvent>()
    /// Each device's RSSI when last seen.
    private var lastRSSI: [BluetoothAddress: Int16] = [:]
    /// The address that has been connected at least once in this pairing (reconnects count after it).
    var connectedOnce: BluetoothAddress?
    /// Set by dropLink: the link's end is the session's rejection, paced like a failed attempt.
    var rejection: String?
    /// Device1.Pair calls made: glasses that bond are paired once, never again on a reconnect.
    var pairCalls = 0
    /// Set while reconnecting fails because the glasses refuse to pair: the state's reason then.
    var bondRefusal: String?
    /// Supervision paused (a DFU holds the device): no reconnecting, and the link is left as it is.
    private var suspended = false
    private let targets: AsyncStream<BluetoothAddress?>.Continuation
    private let targetStream: AsyncStream<BluetoothAddress?>
    private let changes: AsyncStream<LinkSnapshot>.Continuation
    /// Every change of the link's own state, in order, none skipped (BlueZ's own changes tick
    /// `client.state.changes()` instead).
    public nonisolated let changeStream: AsyncStream<LinkSnapshot>
    /// Whether the paired glasses' bootloader is in sight while glassd watches for the glasses
    /// themselves (an update left them there): what brings them back is an update's business.
    public nonisolated let bootloaderSighted = Watched(false)

    public init(client: BlueZClient, store: any DeviceStore, settings: LinkSettings, logger: Logger) {
        self.client = client
        self.store = store
        self.settings = settings
        self.logger = logger
        (targetStream, targets) = AsyncStream.makeStream(of: BluetoothAddress?.self)
        (changeStream, changes) = AsyncStream.makeStream(of: LinkSnapshot.self)
    }

    /// Reads the stored pairing; call before serving requests, so a Pair cannot race it.
    public func loadPairing() async {
        guard !loaded else { return }
        loaded = true
        do {
            if let stored = try await store.pairedDevice() {
                paired = stored
                setState(.disconnected)
                targets.yield(stored.address)
            }
        } catch {
            logger.error("cannot read the paired device: \(error)")
        }
    }

    // MARK: What the D-Bus side reads

    public func snapshot() -> LinkSnapshot {
        let bluez = client.state.snapshot
        var devices: [LinkSnapshot.Device] = []
        if let adapter = bluez.adapterPath(named: settings.adapter) {
            for var seen in bluez.glasses(under: adapter, kinds: settings.kinds) {
                // Shown as last seen: bluetoothd forgets RSSI when discovery stops.
                if seen.rssi == Int16.min {
                    seen.rssi = lastRSSI[seen.address] ?? Int16.min
                } else {
                    lastRSSI[seen.address] = seen.rssi
                }
                let mine = seen.address == paired?.address
                devices.append(
                    .init(
                        address: seen.address, name: seen.name, rssi: seen.rssi, connected: mine && state == .connected,
                        state: mine ? state : .unpaired, reconnectCount: mine ? reconnectCount : 0, kind: seen.kind))
            }
        }
        if let paired, !devices.contains(where: { $0.address == paired.address }) {
            devices.append(
                .init(
                    address: paired.address, name: paired.name, rssi: Int16.min, connected: state == .connected,
                    state: state, reconnectCount: reconnectCount, kind: nil))
        }
        return LinkSnapshot(state: state, paired: paired?.address, devices: devices, generation: generation, reason: reason)
    }

    /// Link events from now on; a link already up is reported first.
    public func events() -> AsyncStream<LinkEvent> {
        linkEvents.subscribe(first: link.map { .up($0, generation: generation) })
    }

    /// Drops the current link (a session on it gave up): the supervisor reconnects on its backoff.
    public func dropLink(reason: String) async {
        guard link != nil, let paired else { return }
        let snapshot = client.state.snapshot
        guard let adapter = snapshot.adapterPath(named: settings.adapter) else { return }
        logger.notice("dropping the link: \(reason)", metadata: ["device": "\(paired.address)"])
        rejection = reason
        _ = try? await client.call(snapshot.devicePath(adapter, paired.address), BlueZ.device, "Disconnect")
    }

    /// Stops supervising without unpairing and without disconnecting (a firmware update is about
    /// to reset the device); `resume()` takes it up again.
    public func suspend() {
        guard !suspended, paired != nil else { return }
        suspended = true
        logger.info("link supervision suspended")
        targets.yield(nil)
    }

    public func resume() {
        guard suspended else { return }
        suspended = false
        logger.info("link supervision resumed")
        if let paired { targets.yield(paired.address) }
    }

    func setState(_ new: LinkState, reason: String = "") {
        guard state != new || self.reason != reason else { return }
        if state != new {
            logger.info("link \(new.rawValue)", metadata: ["device": "\(paired?.address.description ?? "-")"])
        }
        state = new
        self.reason = reason
        changes.yield(snapshot())
    }

    /// A supervision run may only speak for the pairing it was started for.
    func isCurrent(_ address: BluetoothAddress) -> Bool {
        !Task.isCancelled && paired?.address == address
    }

    // MARK: Requests

    /// Pairs with `address`, or with the strongest glasses in range when it is empty; glasses
    /// whose kind bonds are bonded with BlueZ first.
    public func pair(_ address: String) async throws(LinkError) -> BluetoothAddress {
        await loadPairing()
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
        let adapter = try await adapterPath()
        let found = try await find(wanted, under: adapter)
        if paired != nil { throw .alreadyPaired("Paired meanwhile; unpair first.") }
        // Bonded here, not by the supervision, so a refusal fails this request and nothing is saved.
        let device = client.state.snapshot.devicePath(adapter, found.address)
        if kind(of: device)?.bonds == true {
            do {
                try await bond(device)
            } catch {
                if client.state.snapshot.isConnected(device) { _ = try? await client.call(device, BlueZ.device, "Disconnect") }
                throw error
            }
        }
        if paired != nil { throw .alreadyPaired("Paired meanwhile; unpair first.") }
        do {
            try await store.savePaired(found.address, name: found.name, at: unixMS())
        } catch {
            throw .failed("The pairing could not be saved.")
        }
        paired = (found.address, found.name)
        suspended = false
        reconnectCount = 0
        connectedOnce = nil
        bondRefusal = nil
        logger.notice("paired", metadata: ["device": "\(found.address)", "rssi": "\(found.rssi)"])
        setState(.disconnected)
        targets.yield(found.address)
        return found.address
    }

    /// Forgets the glasses: disconnects and stops reconnecting at once; glasses that bond are
    /// removed from BlueZ with their bond before this returns, so a Pair right after starts afresh.
    public func unpair() async throws(LinkError) {
        await loadPairing()
        guard let paired else { throw .notPaired("No glasses are paired.") }
        do {
            try await store.forget(paired.address)
        } catch {
            throw .failed("The pairing could not be removed from the database.")
        }
        // (Re-checked: a concurrent Unpair may have won while the database was written.)
        guard self.paired?.address == paired.address else { throw .notPaired("No glasses are paired.") }
        self.paired = nil
        suspended = false
        setState(.unpaired)
        targets.yield(nil)
        await removeBond(paired.address)
        logger.notice("unpaired", metadata: ["device": "\(paired.address)"])
    }

    /// Monocles seen within `seconds`, strongest first.
    public func scan(seconds: UInt32) async throws(LinkError) -> [ScanResult] {
        let adapter = try await adapterPath()
        guard seconds > 0 else { return ScanResult.strongestFirst(client.state.snapshot.inSight(under: adapter, kinds: settings.kinds)) }
        var seen: [ScanResult] = []
        // Read while discovering: bluetoothd clears RSSI when discovery stops.
        try await withDiscovery(adapter) {
            try await Task.sleep(for: .seconds(min(seconds, 60)))
            seen = client.state.snapshot.inSight(under: adapter, kinds: settings.kinds)
        }
        return ScanResult.strongestFirst(seen)
    }

    /// The adapter for a request; waits (briefly) for the first look at BlueZ if glassd just started.
    private func adapterPath() async throws(LinkError) -> String {
        try? await client.state.wait(timeout: .seconds(5)) { $0.initialized }
        guard let path = client.state.snapshot.adapterPath(named: settings.adapter) else {
            let which = settings.adapter.map { "Bluetooth adapter \($0)" } ?? "powered Bluetooth adapter"
            throw .noAdapter("No \(which) found.")
        }
        return path
    }

    /// Scans for `wanted` (or any glasses, then keeps looking a moment for stronger ones).
    private func find(_ wanted: BluetoothAddress?, under adapter: String) async throws(LinkError) -> ScanResult {
        let kinds = settings.kinds
        let matches: @Sendable (BlueZState.Snapshot) -> Bool = { snapshot in
            let seen = snapshot.inSight(under: adapter, kinds: kinds)
            return wanted.map { w in seen.contains { $0.address == w } } ?? !seen.isEmpty
        }
        var inSight: [ScanResult] = []
        try await withDiscovery(adapter) {
            do {
                try await client.state.wait(timeout: settings.scanTimeout, until: matches)
            } catch is BlueZState.TimedOut {
                return
            }
            if wanted == nil { try await Task.sleep(for: settings.scanSettle) }
            // Read while discovering: bluetoothd clears RSSI when discovery stops.
            inSight = client.state.snapshot.inSight(under: adapter, kinds: settings.kinds)
        }
        let seen = ScanResult.strongestFirst(inSight)
        if let wanted {
            if let device = seen.first(where: { $0.address == wanted }) { return device }
            throw .notFound("No glasses \(wanted) in range.")
        }
        guard let strongest = seen.first else { throw .notFound("No glasses in range.") }
        return strongest
    }

    /// Runs `body` while discovery is on, shared by everyone who needs it; starting and stopping
    /// are serialised so a second user never runs before the first one's start finished.
    func withDiscovery(_ adapter: String, _ body: () async throws -> Void) async throws(LinkError) {
        do {
            try await discoveryGate.withLock {
                if discoveryUsers == 0 {
                    do {
                        try await client.call(
                            adapter, BlueZ.adapter, "SetDiscoveryFilter",
                            [
                                .vardict([
                                    "Transport": .string("le"),
                                    // The bootloader too: glasses left in DfuTarg are found.
                                    "UUIDs": .array(
                                        element: "s", (settings.kinds.map(\.advertisedService) + [NordicDFUUUID.service]).map { .string($0) }),
                                ])
                            ])
                        try await client.call(adapter, BlueZ.adapter, "StartDiscovery")
                    } catch let error as BusError where error.name == "org.bluez.Error.InProgress" {
                        // Already discovering: that serves us too.
                    }
                }
                discoveryUsers += 1
            }
        } catch {
            throw .failed("Cannot scan: \(error)")
        }
        let outcome: (any Error)?
        do {
            try await body()
            outcome = nil
        } catch {
            outcome = error
        }
        await discoveryGate.withLockUncancellable {
            discoveryUsers -= 1
            if discoveryUsers == 0 { _ = try? await client.call(adapter, BlueZ.adapter, "StopDiscovery") }
        }
        if let outcome { throw .failed(outcome is CancellationError ? "Cancelled." : "\(outcome)") }
    }

    // MARK: Supervision

    /// Supervises the paired device (starting with the stored one) until the service ends.
    public func run() async {
        await loadPairing()
        await withDiscardingTaskGroup { group in
            var current: StopSignal?
            for await target in targetStream {
                // One supervision at a time: the old one has disconnected before a new one starts.
                await current?.stopAndWait()
                current = nil
                guard let target else { continue }
                let stop = StopSignal()
                current = stop
                group.addTask { await self.supervise(target, until: stop) }
            }
            current?.requested.fire()
        }
    }

    /// Supervises `address` until `stop` fires.
    private func supervise(_ address: BluetoothAddress, until stop: StopSignal) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.superviseLoop(address) }
            group.addTask { await stop.requested.wait() }
            await group.next()
            group.cancelAll()
        }
        await release(address)
        stop.finished.fire()
    }

    /// Supervision ended. Unpaired: drop the connection. Shutting down (cancelled): leave it to
    /// bluetoothd, so a restarted glassd finds the glasses still connected.
    private func release(_ address: BluetoothAddress) async {
        link?.close()
        link = nil
        guard !Task.isCancelled, !suspended else { return }
        let snapshot = client.state.snapshot
        guard let adapter = snapshot.adapterPath(named: settings.adapter) else { return }
        let device = snapshot.devicePath(adapter, address)
        if snapshot.isConnected(device) { _ = try? await client.call(device, BlueZ.device, "Disconnect") }
    }

    func seconds(_ d: Duration) -> Double {
        Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }

    func unixMS() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }
}
