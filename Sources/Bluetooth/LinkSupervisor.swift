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

    private(set) var paired: PairedGlasses?
    var pairedAddress: BluetoothAddress? { paired?.address }
    private var loaded = false
    private(set) var state: LinkState = .unpaired
    /// Why the link is where it is (waiting for the glasses, reconnecting); empty when connected.
    private(set) var reason = ""
    var reconnectCount: UInt32 = 0
    private var pairing = false
    private var discoveryUsers = 0
    private let discoveryGate = AsyncGate()
    var link: BlueZConnection?
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
    private let targets: AsyncStream<PairedGlasses?>.Continuation
    private let targetStream: AsyncStream<PairedGlasses?>
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
        (targetStream, targets) = AsyncStream.makeStream(of: PairedGlasses?.self)
        (changeStream, changes) = AsyncStream.makeStream(of: LinkSnapshot.self)
    }

    /// Reads the stored pairing; call before serving requests, so a Pair cannot race it.
    public func loadPairing() async {
        guard !loaded else { return }
        loaded = true
        do {
            if let stored = try await store.pairedGlasses() {
                paired = stored
                setState(.disconnected)
                targets.yield(stored)
            }
        } catch {
            logger.error("cannot read the paired device: \(error)")
        }
    }

    // MARK: What the D-Bus side reads

    public func snapshot() -> LinkSnapshot {
        let bluez = client.state.snapshot
        let adapter = bluez.adapterPath(named: settings.adapter)
        var devices: [LinkSnapshot.Device] = []
        if let adapter {
            for var seen in bluez.glasses(under: adapter, kinds: settings.kinds) {
                // Shown as last seen: bluetoothd forgets RSSI when discovery stops.
                if seen.rssi == Int16.min {
                    seen.rssi = lastRSSI[seen.address] ?? Int16.min
                } else {
                    lastRSSI[seen.address] = seen.rssi
                }
                if let paired, seen.radios.contains(where: { paired.contains($0.address) }) {
                    devices.append(pairedDevice(paired, rssi: seen.rssi, kind: seen.kind, radios: bluez.radioStates(paired, under: adapter)))
                } else {
                    let radios = seen.radios.map { radio in
                        LinkSnapshot.Radio(
                            address: radio.address, role: radio.role,
                            state: bluez.isConnected(bluez.devicePath(adapter, radio.address))
                                ? .connected : radio.rssi == Int16.min ? .outOfRange : .inRange)
                    }
                    devices.append(
                        .init(
                            address: seen.address, name: seen.name, rssi: seen.rssi, connected: false, state: .unpaired,
                            reconnectCount: 0, kind: seen.kind, radios: radios))
                }
            }
        }
        if let paired, !devices.contains(where: { $0.address == paired.address }) {
            let radios =
                adapter.map { bluez.radioStates(paired, under: $0) }
                ?? paired.radios.map { LinkSnapshot.Radio(address: $0.address, role: $0.role, state: .outOfRange) }
            devices.append(pairedDevice(paired, rssi: Int16.min, kind: nil, radios: radios))
        }
        return LinkSnapshot(state: state, paired: paired?.address, devices: devices, generation: generation, reason: reason)
    }

    private func pairedDevice(_ paired: PairedGlasses, rssi: Int16, kind: GlassesKindName?, radios: [LinkSnapshot.Radio])
        -> LinkSnapshot.Device
    {
        .init(
            address: paired.address, name: paired.name, rssi: rssi, connected: state == .connected, state: state,
            reconnectCount: reconnectCount, kind: kind, radios: radios)
    }

    /// Link events from now on; a link already up is reported first.
    public func events() -> AsyncStream<LinkEvent> {
        linkEvents.subscribe(first: link.map { .up($0.link, generation: generation) })
    }

    /// Drops the current link (a session on it gave up): the supervisor reconnects on its backoff.
    public func dropLink(reason: String) async {
        guard link != nil, let paired else { return }
        let snapshot = client.state.snapshot
        guard let adapter = snapshot.adapterPath(named: settings.adapter) else { return }
        logger.notice("dropping the link: \(reason)", metadata: ["device": "\(paired.address)"])
        rejection = reason
        await disconnect(paired, under: adapter)
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
        if let paired { targets.yield(paired) }
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
            if let wanted, paired.contains(wanted) { return paired.address }
            throw .alreadyPaired("Already paired with \(paired.address); unpair first.")
        }
        guard !pairing else { throw .busy("A pairing is already in progress.") }
        pairing = true
        defer { pairing = false }
        let adapter = try await adapterPath()
        let found = try await find(wanted, under: adapter)
        if paired != nil { throw .alreadyPaired("Paired meanwhile; unpair first.") }
        // Bonded here, not by the supervision, so a refusal fails this request and nothing is saved.
        let devices = found.radios.map { client.state.snapshot.devicePath(adapter, $0.address) }
        if settings.kinds.kind(named: found.kind)?.bonds == true {
            do {
                for device in devices { try await bond(device) }
            } catch {
                for device in devices where client.state.snapshot.isConnected(device) {
                    _ = try? await client.call(device, BlueZ.device, "Disconnect")
                }
                throw error
            }
        }
        if paired != nil { throw .alreadyPaired("Paired meanwhile; unpair first.") }
        var glasses = found.pairing
        glasses.kind = settings.kinds.kind(named: found.kind)?.name.rawValue  // the kind's own name, not a variant's
        do {
            try await store.savePaired(glasses, at: unixMS())
        } catch {
            throw .failed("The pairing could not be saved.")
        }
        paired = glasses
        suspended = false
        reconnectCount = 0
        connectedOnce = nil
        bondRefusal = nil
        logger.notice(
            "paired", metadata: ["device": "\(glasses.address)", "rssi": "\(found.rssi)", "radios": "\(glasses.radios.count)"])
        setState(.disconnected)
        targets.yield(glasses)
        return glasses.address
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
        for radio in paired.radios { await removeBond(radio.address) }
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

    /// Scans for `wanted` (or any glasses, then keeps looking a moment for stronger ones): glasses
    /// of more than one radio are found when every radio is in sight.
    private func find(_ wanted: BluetoothAddress?, under adapter: String) async throws(LinkError) -> ScanResult {
        let kinds = settings.kinds
        let candidates: @Sendable (BlueZState.Snapshot) -> [ScanResult] = { snapshot in
            snapshot.inSight(under: adapter, kinds: kinds).filter { seen in
                wanted.map { w in seen.radios.contains { $0.address == w } } ?? true
            }
        }
        let whole: @Sendable (ScanResult) -> Bool = { seen in
            kinds.kind(named: seen.kind).map { seen.isWhole(as: $0) && !seen.radios.contains { $0.rssi == Int16.min } } ?? false
        }
        var inSight: [ScanResult] = []
        try await withDiscovery(adapter) {
            do {
                try await client.state.wait(timeout: settings.scanTimeout) { candidates($0).contains(where: whole) }
            } catch is BlueZState.TimedOut {
                inSight = candidates(client.state.snapshot)
                return
            }
            if wanted == nil { try await Task.sleep(for: settings.scanSettle) }
            // Read while discovering: bluetoothd clears RSSI when discovery stops.
            inSight = candidates(client.state.snapshot)
        }
        let seen = ScanResult.strongestFirst(inSight)
        if let found = seen.first(where: whole) { return found }
        if let part = seen.first, let kind = kinds.kind(named: part.kind) {
            let missing = kind.radios.filter { role in !part.radios.contains { $0.role == role && $0.rssi != Int16.min } }
            throw .notFound("Only part of \(part.name) is in range: its \(missing.joined(separator: " and ")) radio did not appear.")
        }
        throw .notFound(wanted.map { "No glasses \($0) in range." } ?? "No glasses in range.")
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

    /// Supervises the paired glasses (starting with the stored ones) until the service ends.
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

    /// Supervises `glasses` until `stop` fires.
    private func supervise(_ glasses: PairedGlasses, until stop: StopSignal) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.superviseLoop(glasses) }
            group.addTask { await stop.requested.wait() }
            await group.next()
            group.cancelAll()
        }
        await release(glasses)
        stop.finished.fire()
    }

    /// Supervision ended. Unpaired: drop the connection. Shutting down (cancelled): leave it to
    /// bluetoothd, so a restarted glassd finds the glasses still connected.
    private func release(_ glasses: PairedGlasses) async {
        link?.close()
        link = nil
        guard !Task.isCancelled, !suspended else { return }
        guard let adapter = client.state.snapshot.adapterPath(named: settings.adapter) else { return }
        await disconnect(glasses, under: adapter)
    }

    /// Disconnects every radio of `glasses` that BlueZ shows connected.
    func disconnect(_ glasses: PairedGlasses, under adapter: String) async {
        for radio in glasses.radios {
            let device = client.state.snapshot.devicePath(adapter, radio.address)
            if client.state.snapshot.isConnected(device) { _ = try? await client.call(device, BlueZ.device, "Disconnect") }
        }
    }

    /// Notes the kind the glasses showed when connected (a pairing stored before kinds were kept
    /// learns it so).
    func learnKind(_ kind: GlassesKindName, of address: BluetoothAddress) async {
        guard paired?.address == address else { return }
        let base = settings.kinds.kind(named: kind)?.name.rawValue ?? kind.rawValue
        paired?.kind = base
        try? await store.touch(address, kind: base, at: unixMS())
    }

    func seconds(_ d: Duration) -> Double {
        Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }

    func unixMS() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }
}
