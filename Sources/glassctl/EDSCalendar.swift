// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import DesktopCalendar
import Foundation
import NotifyRules

/// The user's calendars in Evolution Data Server, on the session bus (EDS 3.46 and later: the
/// sources registry org.gnome.evolution.dataserver.Sources5, the calendar factory Calendar8).
///
/// Each read lists the sources (the registry's ObjectManager), opens the shown calendars it has
/// not opened yet (CalendarFactory.OpenCalendar, then Calendar.Open) and asks each for the events
/// of the lookahead (Calendar.GetObjectList with an occur-in-time-range? query). For each open
/// calendar it keeps a view (Calendar.GetView "#t", no initial objects) whose ObjectsAdded,
/// ObjectsModified and ObjectsRemoved signals say the calendar changed. No EDS on the bus: no
/// calendar, and a note saying so.
actor EDSCalendar {
    static let sourcesName = "org.gnome.evolution.dataserver.Sources5"
    static let sourcesPath = "/org/gnome/evolution/dataserver/SourceManager"
    static let sourceInterface = "org.gnome.evolution.dataserver.Source"
    static let calendarName = "org.gnome.evolution.dataserver.Calendar8"
    static let factoryPath = "/org/gnome/evolution/dataserver/CalendarFactory"
    static let factoryInterface = "org.gnome.evolution.dataserver.CalendarFactory"
    static let calendarInterface = "org.gnome.evolution.dataserver.Calendar"
    static let viewInterface = "org.gnome.evolution.dataserver.CalendarView"
    static let objectManager = "org.freedesktop.DBus.ObjectManager"

    /// The calendar's view flags: none (E_CAL_CLIENT_VIEW_FLAGS_NONE), so it does not first send
    /// every object it matches; only changes.
    static let viewFlags: UInt32 = 0

    /// An opened calendar: where it is, and its view.
    private struct Opened {
        var busName: String
        var path: String
        var view: String?
    }

    let bus: BusConnection
    /// By source UID.
    private var opened: [String: Opened] = [:]

    init(bus: BusConnection) {
        self.bus = bus
    }

    /// The next event of the shown calendars at `now`, and a note when something kept a calendar
    /// (or all) from being read.
    func next(now: Date) async -> (NextEvent?, note: String?) {
        let sources: [String]
        do {
            sources = try await calendarSources()
        } catch let error as BusError where Self.absent.contains(error.name) {
            opened = [:]
            return (nil, "no Evolution Data Server on the session bus: no calendar event for the glance")
        } catch {
            opened = [:]
            return (nil, "cannot list the calendars (Evolution Data Server): \(error)")
        }
        for uid in opened.keys where !sources.contains(uid) { await close(uid) }
        var objects: [String] = []
        var failed: [String] = []
        for uid in sources {
            do {
                let calendar = try await open(uid)
                let reply = try await bus.call(
                    calendar.busName, path: calendar.path, interface: Self.calendarInterface, member: "GetObjectList",
                    [.string(Self.query(from: now, to: now.addingTimeInterval(NextEvent.lookahead)))], timeoutSeconds: 20)
                objects += (reply.first?.elements ?? []).compactMap(\.string)
            } catch {
                // Opened again at the next read.
                opened[uid] = nil
                failed.append("\(uid): \(error)")
            }
        }
        let next = NextEvent.next(in: objects, now: now)
        return (next, failed.isEmpty ? nil : "cannot read calendar \(failed.joined(separator: "; "))")
    }

    /// EDS went away or came back: what was opened is gone.
    func forget() {
        opened = [:]
    }

    /// The UIDs of the sources that are calendars, enabled and selected.
    private func calendarSources() async throws -> [String] {
        let reply = try await bus.call(
            Self.sourcesName, path: Self.sourcesPath, interface: Self.objectManager, member: "GetManagedObjects", timeoutSeconds: 20)
        // a{oa{sa{sv}}}
        guard case .dict(_, _, let objects)? = reply.first else { return [] }
        var uids: [String] = []
        for object in objects {
            guard let source = object.value.stringKeyed?[Self.sourceInterface]?.stringKeyed,
                let uid = source["UID"]?.string, let data = source["Data"]?.string, !uid.isEmpty,
                CalendarSource.isShownCalendar(keyFile: data)
            else { continue }
            uids.append(uid)
        }
        return uids.sorted()
    }

    private func open(_ uid: String) async throws -> Opened {
        if let known = opened[uid] { return known }
        let reply = try await bus.call(
            Self.calendarName, path: Self.factoryPath, interface: Self.factoryInterface, member: "OpenCalendar", [.string(uid)],
            timeoutSeconds: 30)
        guard reply.count == 2, let path = reply[0].string, let busName = reply[1].string, !path.isEmpty, !busName.isEmpty else {
            throw UnexpectedReply(member: "OpenCalendar", signatures: reply.map(\.signature))
        }
        _ = try await bus.call(busName, path: path, interface: Self.calendarInterface, member: "Open", timeoutSeconds: 30)
        var calendar = Opened(busName: busName, path: path)
        // Without a view the calendar is still read (at the timer's times), only not at once on a change.
        if let view = try? await bus.call(busName, path: path, interface: Self.calendarInterface, member: "GetView", [.string("#t")]).first?.string {
            _ = try? await bus.call(busName, path: view, interface: Self.viewInterface, member: "SetFlags", [.uint32(Self.viewFlags)])
            if (try? await bus.call(busName, path: view, interface: Self.viewInterface, member: "Start")) != nil { calendar.view = view }
        }
        opened[uid] = calendar
        return calendar
    }

    private func close(_ uid: String) async {
        guard let calendar = opened.removeValue(forKey: uid) else { return }
        if let view = calendar.view {
            _ = try? await bus.call(calendar.busName, path: view, interface: Self.viewInterface, member: "Dispose", timeoutSeconds: 5)
        }
        _ = try? await bus.call(calendar.busName, path: calendar.path, interface: Self.calendarInterface, member: "Close", timeoutSeconds: 5)
    }

    /// EDS answered in a shape it does not document.
    struct UnexpectedReply: Error, CustomStringConvertible {
        var member: String
        var signatures: [String]
        var description: String { "\(member) answered (\(signatures.joined(separator: ", "))), not (s, s)" }
    }

    /// Errors that mean EDS is not on the bus (nor can be started).
    static let absent: Set = [
        "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner",
        "org.freedesktop.DBus.Error.Spawn.ServiceNotFound", "org.freedesktop.DBus.Error.Spawn.ExecFailed",
        "org.freedesktop.DBus.Error.Spawn.ChildExited",
    ]

    /// EDS's query for the events with an occurrence from `start` to `end`: times in UTC as
    /// isodate_from_time_t writes them; floating times taken as local (the optional third argument,
    /// an Olson name, when local time has one).
    static func query(from start: Date, to end: Date, zone: TimeZone = .current) -> String {
        var query = "(occur-in-time-range? (make-time \"\(isoDate(start))\") (make-time \"\(isoDate(end))\")"
        let name = zone.identifier
        if name.contains("/"), name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "/_+-".contains($0)) }) {
            query += " \"\(name)\""
        }
        return query + ")"
    }

    /// `YYYYMMDDTHHMMSSZ`.
    static func isoDate(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        let p = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        return String(format: "%04d%02d%02dT%02d%02d%02dZ", p.year ?? 1970, p.month ?? 1, p.day ?? 1, p.hour ?? 0, p.minute ?? 0, p.second ?? 0)
    }

    /// The signals that say the calendars changed: its views' objects, the registry's sources
    /// (added, removed, changed), EDS's names coming and going. In place when this returns.
    func changes() async throws -> SignalSubscription {
        try await bus.subscribe(
            SignalMatch(interface: Self.viewInterface, member: "ObjectsAdded"),
            SignalMatch(interface: Self.viewInterface, member: "ObjectsModified"),
            SignalMatch(interface: Self.viewInterface, member: "ObjectsRemoved"),
            SignalMatch(sender: Self.sourcesName, interface: Self.objectManager),
            SignalMatch(sender: Self.sourcesName, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"),
            SignalMatch(sender: "org.freedesktop.DBus", interface: "org.freedesktop.DBus", member: "NameOwnerChanged"))
    }

    /// Calls `changed` for each of `signals` (from `changes()`) that concerns the calendars read
    /// (`forget` first when EDS's processes changed), until the connection is lost.
    func watch(_ signals: SignalSubscription, _ changed: @Sendable () -> Void) async {
        for await event in signals {
            switch event {
            case .signal(let signal):
                if signal.member == "NameOwnerChanged" {
                    guard let name = signal.arguments.first?.string, name == Self.sourcesName || name == Self.calendarName else { continue }
                    forget()
                } else if signal.interface == Self.viewInterface {
                    // Other programs' views (the desktop's own calendar) are not this agent's business.
                    guard opened.values.contains(where: { $0.view == signal.path }) else { continue }
                }
                changed()
            case .overflowed:
                changed()
            }
        }
    }
}
