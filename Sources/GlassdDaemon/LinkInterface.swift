// SPDX-License-Identifier: GPL-2.0-or-later
import Bluetooth
import Concurrency
import DBusKit
import Foundation
import GlassdAPI
import GlassdContract
import Glasses
import LinkKit
import Logging
import Product

/// The glasses link on D-Bus: Pair, Unpair, Scan and the link properties on org.glassd.Manager1,
/// and one org.glassd.Device1 object per pair of glasses known, its State the session's while connected.
struct LinkInterface {
    let connection: BusConnection
    let supervisor: LinkSupervisor
    let bluez: BlueZClient
    let session: any GlassesSession
    /// The session's status for the update's waits (set here, where the session's events are read).
    let statuses: Watched<SessionStatus>
    /// What an update adds to the paired device's State; `.updating` makes Pair and Unpair busy.
    let updateMark: Watched<UpdateMark>
    let logger: Logger
    /// The pairing PairedDevice and State show now: Pair and Unpair answer once it is theirs,
    /// so a client reading the properties after the reply sees the call's effect.
    let publishedPairing = Watched<BluetoothAddress?>(nil)
    /// The update mark State shows now: an update job ends once it is shown, so a client that
    /// reads State after the job finished sees the update's effect.
    let publishedMark = Watched(UpdateMark.none)
    /// Run before Unpair forgets the glasses (an agent session on them is stopped).
    let beforeUnpair = HookList()

    private func refuseWhileUpdating() throws(BusError) {
        guard updateMark.current != .updating else { throw ErrorMapping.busError(GlassesRefusal.updating) }
    }

    /// Members added to org.glassd.Manager1.
    var methods: [InterfaceSpec.Method] {
        [
            GlassdBus.Manager1.Pair.method { call in
                let address = call.arguments.first?.string ?? ""
                try refuseWhileUpdating()
                do throws(LinkError) {
                    let paired = try await supervisor.pair(address)
                    await shown(pairing: paired)
                    return [.objectPath(GlassdBus.devicePath(address: paired.description))]
                } catch {
                    throw ErrorMapping.busError(error)
                }
            },
            GlassdBus.Manager1.Unpair.method { _ in
                try refuseWhileUpdating()
                await beforeUnpair.run()
                do throws(LinkError) {
                    try await supervisor.unpair()
                    await shown(pairing: nil)
                    return []
                } catch {
                    throw ErrorMapping.busError(error)
                }
            },
            GlassdBus.Manager1.Scan.method { call in
                do throws(LinkError) {
                    let seen = try await supervisor.scan(seconds: call.arguments.first?.uint32 ?? 0)
                    let rows = seen.map { DBusValue.structure([.string($0.address.description), .string($0.name), .int16(exported($0.rssi))]) }
                    return [.array(element: "(ssn)", rows)]
                } catch {
                    throw ErrorMapping.busError(error)
                }
            },
        ]
    }

    /// Until the properties show `pairing` (they follow the supervisor's changes in order);
    /// bounded, in case a concurrent call replaced it first.
    private func shown(pairing: BluetoothAddress?) async {
        let shown = try? await publishedPairing.wait(timeout: .seconds(5), clock: ContinuousClock()) { $0 == pairing }
        if shown == nil { logger.notice("the link properties did not follow the pairing in time") }
    }

    var properties: [InterfaceSpec.Property] { Self.initialProperties }

    /// The link properties as they start (and stay, without Bluetooth).
    static var initialProperties: [InterfaceSpec.Property] {
        [
            GlassdBus.Manager1.PropertySpec.pairedDevice("/"),
            GlassdBus.Manager1.PropertySpec.state(LinkState.unpaired.rawValue),
        ]
    }

    private enum Update: Sendable {
        /// The link changed: shown in order, every state.
        case link(LinkSnapshot)
        /// Something in BlueZ changed (RSSI, names, devices come and go).
        case bluez
        /// The session on the link changed: shown in order, every state.
        case session(SessionStatus)
        /// An update began or ended, or the pinned images differ from the glasses'.
        case mark(UpdateMark)
    }

    /// Mirrors the supervisor, the session and BlueZ into properties and device objects until
    /// cancelled; runs the session on the supervisor's links (the product follows the session
    /// by itself: GlassesProduct).
    func run() async {
        let (updates, sink) = AsyncStream.makeStream(of: Update.self)
        let bluezChanges = bluez.state.changes()
        let links = await supervisor.events()
        // Before the session runs, so no event is missed.
        let sessionEvents = session.subscribe()
        await withDiscardingTaskGroup { group in
            group.addTask { for await snapshot in supervisor.changeStream { sink.yield(.link(snapshot)) } }
            group.addTask { for await _ in bluezChanges { sink.yield(.bluez) } }
            group.addTask { for await mark in updateMark.values() { sink.yield(.mark(mark)) } }
            group.addTask {
                await session.run(links: links) { reason in await supervisor.dropLink(reason: reason) }
            }
            group.addTask {
                for await case .status(let status) in sessionEvents {
                    statuses.set(status)
                    sink.yield(.session(status))
                }
            }
            var shown = Shown()
            var link = await supervisor.snapshot()
            sink.yield(.bluez)
            for await update in updates {
                switch update {
                case .link(let snapshot):
                    link = snapshot
                    await publishDevices(snapshot, shown: &shown)
                    await publishLink(snapshot, session: shown.session)
                case .session(let status):
                    shown.session = status
                    if let address = link.paired, var device = shown.devices[address] {
                        // The session speaks for the paired device only while its link is up.
                        device.connected = link.state == .connected
                        await publish(device, paired: true, link: link, shown: &shown)
                    }
                    await publishLink(link, session: status)
                case .mark(let mark):
                    shown.mark = mark
                    if let address = link.paired, let device = shown.devices[address] {
                        await publish(device, paired: true, link: link, shown: &shown)
                    }
                    await publishLink(link, session: shown.session)
                    publishedMark.set(mark)
                case .bluez:
                    // The link's own fields only change through .link, so they never go back in time here.
                    var snapshot = await supervisor.snapshot()
                    for (i, device) in snapshot.devices.enumerated() {
                        if let before = shown.devices[device.address] {
                            snapshot.devices[i].state = before.state
                            snapshot.devices[i].connected = before.connected
                            snapshot.devices[i].reconnectCount = before.reconnectCount
                        }
                    }
                    snapshot.state = link.state
                    snapshot.paired = link.paired
                    snapshot.generation = link.generation
                    snapshot.reason = link.reason
                    await publishDevices(snapshot, shown: &shown)
                }
            }
        }
    }
}

/// RSSI as shown: 0 when never measured.
func exported(_ rssi: Int16) -> Int16 { rssi == Int16.min ? 0 : rssi }
