// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import Foundation

/// A stand-in Evolution Data Server on the world's session bus, from python-dbusmock (it has no
/// template for it): the sources registry (org.gnome.evolution.dataserver.Sources5, an
/// ObjectManager with a Source object per source: UID and Data, the key file) and the calendar
/// factory (Calendar8: OpenCalendar gives a calendar per source UID, with Open, GetObjectList
/// answering the events the test set, and GetView; each view has Start, SetFlags and the rest).
struct EDSStandIn: Sendable {
    static let registryName = "org.gnome.evolution.dataserver.Sources5"
    static let registryPath = "/org/gnome/evolution/dataserver/SourceManager"
    static let calendarName = "org.gnome.evolution.dataserver.Calendar8"
    static let factoryPath = "/org/gnome/evolution/dataserver/CalendarFactory"
    static let calendarInterface = "org.gnome.evolution.dataserver.Calendar"
    static let viewInterface = "org.gnome.evolution.dataserver.CalendarView"
    static let mock = "org.freedesktop.DBus.Mock"

    /// The test's own connection to the session bus.
    let bus: BusConnection

    /// A shown calendar's key file (as EDS writes one for a local calendar).
    static func keyFile(enabled: Bool = true) -> String {
        "[Data Source]\nDisplayName=Personal\nEnabled=\(enabled)\nParent=local-stub\n\n[Calendar]\nBackendName=local\nColor=#62a0ea\nSelected=true\n"
    }

    static func calendarPath(_ uid: String) -> String { "/org/gnome/evolution/dataserver/Calendar/\(uid)" }
    static func viewPath(_ uid: String) -> String { "/org/gnome/evolution/dataserver/CalendarView/\(uid)" }

    /// A source `uid` (a path-safe name) with `keyFile`, and its calendar with `events` (iCalendar
    /// objects, as GetObjectList answers them).
    func addSource(_ uid: String, keyFile: String = EDSStandIn.keyFile(), events: [String]) async throws {
        func method(_ name: String, _ inSignature: String, _ outSignature: String, _ code: String) -> DBusValue {
            .structure([.string(name), .string(inSignature), .string(outSignature), .string(code)])
        }
        _ = try await bus.call(
            Self.calendarName, path: Self.factoryPath, interface: Self.mock, member: "AddObject",
            [
                .string(Self.calendarPath(uid)), .string(Self.calendarInterface), .dict(key: "s", value: "v", []),
                .array(
                    element: "(ssss)",
                    [
                        method("Open", "", "as", "ret = []"), method("Close", "", "", ""),
                        method("GetObjectList", "s", "as", "ret = self.events"),
                        method("GetView", "s", "o", "ret = '\(Self.viewPath(uid))'"),
                        // The test's own: what GetObjectList answers from now on.
                        method("SetEvents", "as", "", "self.events = args[0]"),
                    ]),
            ])
        _ = try await bus.call(
            Self.calendarName, path: Self.factoryPath, interface: Self.mock, member: "AddObject",
            [
                .string(Self.viewPath(uid)), .string(Self.viewInterface), .dict(key: "s", value: "v", []),
                .array(
                    element: "(ssss)",
                    [
                        method("Start", "", "", ""), method("Stop", "", "", ""), method("SetFlags", "u", "", ""),
                        method("SetFieldsOfInterest", "as", "", ""), method("Dispose", "", "", ""),
                    ]),
            ])
        try await setEvents(uid, events)
        // Last, as EDS would: the source appears (InterfacesAdded, which dbusmock leaves to its user)
        // once its calendar can be opened.
        let sourcePath = Self.registryPath + "/Source_\(uid)", sourceInterface = "org.gnome.evolution.dataserver.Source"
        let properties = DBusValue.dict(
            key: "s", value: "v",
            [
                DBusValue.DictEntry(.string("UID"), .variant(.string(uid))),
                DBusValue.DictEntry(.string("Data"), .variant(.string(keyFile))),
            ])
        _ = try await bus.call(
            Self.registryName, path: Self.registryPath, interface: Self.mock, member: "AddObject",
            [.string(sourcePath), .string(sourceInterface), properties, .array(element: "(ssss)", [])])
        _ = try await bus.call(
            Self.registryName, path: Self.registryPath, interface: Self.mock, member: "EmitSignal",
            [
                .string("org.freedesktop.DBus.ObjectManager"), .string("InterfacesAdded"), .string("oa{sa{sv}}"),
                .array(
                    element: "v",
                    [
                        .variant(.objectPath(sourcePath)),
                        .variant(.dict(key: "s", value: "a{sv}", [DBusValue.DictEntry(.string(sourceInterface), properties)])),
                    ]),
            ])
    }

    private func setEvents(_ uid: String, _ events: [String]) async throws {
        _ = try await bus.call(
            Self.calendarName, path: Self.calendarPath(uid), interface: Self.calendarInterface, member: "SetEvents",
            [.array(element: "s", events.map(DBusValue.string))])
    }

    /// Calendar `uid` now holds `events`, and its view says so with `signal` (ObjectsAdded,
    /// ObjectsModified: the objects; ObjectsRemoved: their UIDs).
    func change(_ uid: String, events: [String], signal: String, arguments: [String]) async throws {
        try await setEvents(uid, events)
        _ = try await bus.call(
            Self.calendarName, path: Self.viewPath(uid), interface: Self.mock, member: "EmitSignal",
            [.string(Self.viewInterface), .string(signal), .string("as"), .array(element: "v", [.variant(.array(element: "s", arguments.map(DBusValue.string)))])])
    }

    /// The queries GetObjectList was called with on calendar `uid`, in order.
    func queries(_ uid: String) async throws -> [String] {
        let reply = try await bus.call(Self.calendarName, path: Self.calendarPath(uid), interface: Self.mock, member: "GetCalls")
        return (reply.first?.elements ?? []).compactMap { call in
            guard let fields = call.elements, fields.count == 3, fields[1].string == "GetObjectList" else { return nil }
            return fields[2].elements?.first?.unwrapped.string
        }
    }

    /// A VEVENT with UTC times, as EDS returns one (CRLF lines).
    static func event(uid: String, summary: String, start: Int64, end: Int64, extra: [String] = []) -> String {
        (["BEGIN:VEVENT", "UID:\(uid)", "DTSTAMP:20260101T000000Z", "SUMMARY:\(summary)", "DTSTART:\(utc(start))", "DTEND:\(utc(end))"] + extra
            + ["END:VEVENT"]).joined(separator: "\r\n") + "\r\n"
    }

    /// `YYYYMMDDTHHMMSSZ`.
    static func utc(_ seconds: Int64) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let p = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: Date(timeIntervalSince1970: TimeInterval(seconds)))
        return String(format: "%04d%02d%02dT%02d%02d%02dZ", p.year!, p.month!, p.day!, p.hour!, p.minute!, p.second!)
    }
}

extension NotifyWorld {
    /// The stand-in EDS (see `EDSStandIn`) on the session bus until `body` ends: no sources yet.
    func withEDS<R: Sendable>(_ body: (EDSStandIn) async throws -> R) async throws -> R {
        try await withMock(
            ["-m", EDSStandIn.registryName, EDSStandIn.registryPath, "org.gnome.evolution.dataserver.SourceManager"], on: session,
            name: EDSStandIn.registryName, log: "eds-sources.log"
        ) {
            try await withMock(
                [EDSStandIn.calendarName, EDSStandIn.factoryPath, "org.gnome.evolution.dataserver.CalendarFactory"], on: session,
                name: EDSStandIn.calendarName, log: "eds-calendar.log"
            ) {
                try await withConnection(session) { bus in
                    let eds = EDSStandIn(bus: bus)
                    // Each calendar is opened at its source's UID; the name answering is the factory's own.
                    _ = try await bus.call(
                        EDSStandIn.calendarName, path: EDSStandIn.factoryPath, interface: EDSStandIn.mock, member: "AddMethod",
                        [
                            .string(""), .string("OpenCalendar"), .string("s"), .string("ss"),
                            .string("ret = ('/org/gnome/evolution/dataserver/Calendar/' + args[0], '\(EDSStandIn.calendarName)')"),
                        ])
                    return try await body(eds)
                }
            }
        }
    }
}
