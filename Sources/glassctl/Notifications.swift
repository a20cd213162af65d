// SPDX-License-Identifier: GPL-2.0-or-later
import ArgumentParser
import DBusKit
import Foundation
import GlassdAPI
import GlassdContract

/// The notifications glassd keeps (Manager1.Notifications), and dismissing them.
struct Notifications: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the desktop notifications glassd keeps, newest first, or dismiss them.")

    @OptionGroup var options: GlobalOptions

    @Option(name: .shortAndLong, help: "How many at most (0: all kept).")
    var limit: UInt32 = 20

    @Option(help: "Dismiss the notification with this id (as listed): it no longer waits for the glasses.")
    var dismiss: UInt32?

    @Flag(help: "Dismiss every notification kept.")
    var dismissAll = false

    struct Entry: Encodable {
        var id: UInt32
        var time_ms: Int64
        var app: String
        var summary: String
        var body: String
        var urgency: String
        var state: String
    }

    func run() async throws {
        try await reportingErrors {
            let client = try await options.connect()
            if dismissAll || dismiss != nil {
                try await client.manager.dismissNotification(id: dismissAll ? 0 : dismiss ?? 0)
                if options.json { try printJSON(["dismissed": true]) }
                return
            }
            let entries = Self.entries(try await client.manager.notifications(limit: limit))
            if options.json { return try printJSON(entries) }
            if entries.isEmpty { print("No notifications kept.") }
            for e in entries {
                let time = Date(timeIntervalSince1970: Double(e.time_ms) / 1000).formatted(date: .omitted, time: .shortened)
                let app = e.app.isEmpty ? "" : "\(e.app): "
                print("\(e.id)\t\(time)\t\(e.state)\t\(e.urgency)\t\(app)\(e.summary)\(e.body.isEmpty ? "" : " - \(e.body)")")
            }
        }
    }

    static func entries(_ rows: DBusValue) -> [Entry] {
        (rows.elements ?? []).compactMap { row in
            guard let f = row.elements, f.count == 7, case .uint32(let id) = f[0], case .int64(let at) = f[1],
                case .byte(let urgency) = f[5]
            else { return nil }
            return Entry(
                id: id, time_ms: at, app: f[2].string ?? "", summary: f[3].string ?? "", body: f[4].string ?? "",
                urgency: ["low", "normal", "critical"][Int(min(urgency, 2))], state: f[6].string ?? "")
        }
    }
}

/// The glance on the glasses (Manager1.Glance), as their own gesture shows it.
struct GlanceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "glance",
        abstract: "Show the glance on the glasses (the time, battery, unread notifications, backend) and print it.")

    @OptionGroup var options: GlobalOptions

    func run() async throws {
        try await reportingErrors {
            let text = try await options.connect().manager.glance()
            if options.json { try printJSON(["glance": text]) } else { print(text) }
        }
    }
}
