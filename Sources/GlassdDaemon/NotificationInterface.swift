// SPDX-License-Identifier: GPL-2.0-or-later
import Concurrency
import Foundation
import DBusKit
import GlassdAPI
import GlassdContract
import Glasses
import Logging
import Product
import ServiceLifecycle

/// Manager1's desktop notifications, the glance and the display's queue: the bus side of the
/// display desk (Product's DisplayDesk), which owns what the glasses show.
struct NotificationInterface {
    typealias Manager1 = GlassdBus.Manager1

    /// nil without Bluetooth: no glasses to show anything on.
    let desk: DisplayDesk<ContinuousClock>?
    let logger: Logger

    /// Summary, body and app name together at most this (UTF-8): a notification is a glance.
    static let maxTextBytes = 4096

    var methods: [InterfaceSpec.Method] {
        [
            Manager1.Notify.method { try await notify($0) },
            Manager1.CloseNotification.method { call in
                await desk?.close(desktopID: call.arguments.first?.uint32 ?? 0, from: call.sender)
                return []
            },
            Manager1.Notifications.method { call in
                let limit = Int(call.arguments.first?.uint32 ?? 0)
                let kept = await desk?.notifications.newest(limit) ?? []
                return [.array(element: "(uxsssys)", kept.map(Self.entry))]
            },
            Manager1.DismissNotification.method { call in
                let id = call.arguments.first?.uint32 ?? 0
                guard let desk, await desk.dismiss(id) else { throw ErrorMapping.busError(ManagerRefusal.noNotification(id)) }
                return []
            },
            Manager1.SetNextEvent.method { call in
                let entry: CalendarEntry?
                do {
                    entry = try Self.calendarEntry(call.arguments.first ?? .dict(key: "s", value: "v", []))
                } catch let refusal as ManagerRefusal {
                    throw ErrorMapping.busError(refusal)
                }
                // Without Bluetooth there is no glance to show it in: taken, kept nowhere.
                await desk?.setNextEvent(entry)
                return []
            },
            Manager1.Glance.method { _ in
                guard let desk else { throw ErrorMapping.busError(GlassesRefusal.noBluetooth) }
                let state = await desk.current.state
                guard state == .ready || state == .busy else {
                    throw ErrorMapping.busError(SessionError.notConnected("The glasses are not ready (\(state.rawValue))."))
                }
                return [.string(await desk.glance())]
            },
        ]
    }

    static let initialProperties: [InterfaceSpec.Property] = [
        Manager1.PropertySpec.displayQueue(.array(element: "(ssb)", [])),
        Manager1.PropertySpec.displayStats(Manager1.DisplayCounts(shown: 0, dropped: 0, expired: 0)),
    ]

    private func notify(_ call: MethodCall) async throws -> [DBusValue] {
        let fields: DesktopNotification.Fields
        do {
            fields = try Self.fields(call.arguments.first ?? .dict(key: "s", value: "v", []))
        } catch let refusal as ManagerRefusal {
            throw ErrorMapping.busError(refusal)
        }
        guard let desk else { throw ErrorMapping.busError(GlassesRefusal.noBluetooth) }
        let id = await desk.notify(fields, from: call.sender)
        // The text is private: the log has who and how urgent, not what.
        logger.info(
            "notification", metadata: ["id": "\(id)", "urgency": "\(fields.urgency)", "sender": "\(call.sender)"])
        return [.uint32(id)]
    }

    static func fields(_ value: DBusValue) throws -> DesktopNotification.Fields {
        let bus: Manager1.NotificationFields
        do throws(ContractError) {
            bus = try Manager1.NotificationFields(value)
        } catch {
            throw ManagerRefusal.badNotification("\(error)")
        }
        guard let summary = bus.summary, !summary.isEmpty else { throw ManagerRefusal.badNotification("it has no summary") }
        let urgency = bus.urgency ?? 1
        guard let level = DesktopNotification.Urgency(rawValue: urgency) else {
            throw ManagerRefusal.badNotification("urgency is 0, 1 or 2, not \(urgency)")
        }
        let app = bus.appName ?? "", body = bus.body ?? ""
        guard app.utf8.count + summary.utf8.count + body.utf8.count <= maxTextBytes else {
            throw ManagerRefusal.badNotification("more than \(maxTextBytes) bytes of text")
        }
        let wait = (bus.expireMs ?? 0) > 0 ? Duration.milliseconds(bus.expireMs ?? 0) : nil
        return DesktopNotification.Fields(
            appName: app, summary: summary, body: body, urgency: level, category: bus.category ?? "",
            desktopID: bus.desktopID ?? 0, wait: wait)
    }

    /// The calendar event a SetNextEvent carries; nil: none (no summary).
    static func calendarEntry(_ value: DBusValue) throws -> CalendarEntry? {
        let bus: Manager1.CalendarEvent
        do throws(ContractError) {
            bus = try Manager1.CalendarEvent(value)
        } catch {
            throw ManagerRefusal.badEvent("\(error)")
        }
        guard let summary = bus.summary, !summary.isEmpty else { return nil }
        guard summary.utf8.count <= maxTextBytes else { throw ManagerRefusal.badEvent("more than \(maxTextBytes) bytes of text") }
        guard let start = bus.start else { throw ManagerRefusal.badEvent("it has a summary but no start") }
        let end = bus.end ?? start
        guard end >= start else { throw ManagerRefusal.badEvent("it ends before it starts") }
        return CalendarEntry(
            summary: summary, start: Date(timeIntervalSince1970: TimeInterval(start)),
            end: Date(timeIntervalSince1970: TimeInterval(end)), allDay: bus.allDay ?? false)
    }

    static func entry(_ n: DesktopNotification) -> DBusValue {
        .structure([
            .uint32(n.id), .int64(n.arrived), .string(n.fields.appName), .string(n.fields.summary), .string(n.fields.body),
            .byte(n.fields.urgency.rawValue), .string(n.state.rawValue),
        ])
    }
}

/// Runs the display desk and mirrors its queue in DisplayQueue and DisplayStats.
struct DisplayService: Service {
    let desk: DisplayDesk<ContinuousClock>
    let connection: BusConnection
    let logger: Logger

    func run() async throws {
        let changed = Pulse()
        await desk.setOnChange { changed.pulse() }
        await withDiscardingTaskGroup { group in
            group.addTask { await desk.run() }
            group.addTask {
                while !Task.isCancelled {
                    let ticket = changed.ticket()
                    await publish()
                    await changed.wait(after: ticket)
                }
            }
        }
    }

    private func publish() async {
        let queue = await desk.queue
        let counts = await desk.counts
        do {
            try await connection.setProperty(
                GlassdBus.Manager1.Property.displayQueue,
                to: .array(element: "(ssb)", queue.map { .structure([.string($0.id), .string($0.what), .bool($0.showing)]) }),
                interface: GlassdBus.managerInterface, at: GlassdBus.managerPath)
            try await connection.setProperty(
                GlassdBus.Manager1.Property.displayStats,
                to: GlassdBus.Manager1.DisplayCounts(
                    shown: UInt32(clamping: counts.shown), dropped: UInt32(clamping: counts.dropped),
                    expired: UInt32(clamping: counts.expired)
                ).busValue, interface: GlassdBus.managerInterface, at: GlassdBus.managerPath)
        } catch {
            logger.warning("cannot publish the display's queue, ignoring: \(error)")
        }
    }
}
