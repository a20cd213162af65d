// SPDX-License-Identifier: GPL-2.0-or-later
import ArgumentParser
import DBusKit
import Foundation
import GlassdAPI

struct Watch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the glasses' state, then every change and every question as it happens (session states, battery, what was heard, the answer as it streams, scene frames and alerts), until interrupted.")

    @OptionGroup var options: GlobalOptions

    /// A property change (`property`, `value`) or a question's signal (`signal`, `query_id`, `text`).
    struct Line: Encodable {
        var path: String
        var interface: String
        var property: String?
        var value: String?
        var signal: String?
        var query_id: String?
        var text: String?
    }

    func run() async throws {
        try await reportingErrors {
            let client = try await options.connect()
            // One subscription for all of glassd's signals keeps their order.
            let events = try await client.connection.subscribe(SignalMatch(sender: GlassdBus.name))
            func show(_ line: Line) throws {
                if options.json {
                    try printJSON(line)
                } else if let signal = line.signal {
                    print("\(signal) \(line.query_id ?? "") \(line.text ?? "")")
                } else {
                    print("\(line.path) \(line.property ?? "") = \(line.value ?? "")")
                }
                fflush(nil)
            }
            // Where things stand, then every change (the subscription is already in place).
            func showCurrent() async throws {
                for property in [GlassdBus.Property.state, GlassdBus.Property.pairedDevice] {
                    let value = try await client.property(property)
                    try show(Line(path: GlassdBus.managerPath, interface: GlassdBus.managerInterface, property: property, value: value.display))
                }
            }
            try await showCurrent()
            for await event in events {
                guard case .signal(let signal) = event else {
                    // Too far behind, changes were missed: say where things stand now.
                    try await showCurrent()
                    continue
                }
                for line in Self.lines(signal) { try show(line) }
            }
        }
    }

    /// What one signal prints: a line per changed property, or one for a question's progress.
    static func lines(_ signal: BusSignal) -> [Line] {
        let arguments = signal.arguments
        switch (signal.interface, signal.member) {
        case ("org.freedesktop.DBus.Properties", "PropertiesChanged"):
            guard arguments.count >= 2, let interface = arguments[0].string else { return [] }
            return (arguments[1].stringKeyed ?? [:]).sorted(by: { $0.key < $1.key }).map { name, value in
                Line(path: signal.path, interface: interface, property: name, value: value.unwrapped.display)
            }
        case (GlassdBus.managerInterface, GlassdBus.Signal.transcribed), (GlassdBus.managerInterface, GlassdBus.Signal.answerDelta):
            return [Line(path: signal.path, interface: GlassdBus.managerInterface, signal: signal.member,
                         query_id: arguments.first?.string, text: arguments.dropFirst().first?.string)]
        case (GlassdBus.managerInterface, GlassdBus.Signal.answered):
            return [Line(path: signal.path, interface: GlassdBus.managerInterface, signal: signal.member,
                         query_id: arguments.first?.string, text: arguments.dropFirst(2).first?.string)]
        case (GlassdBus.managerInterface, GlassdBus.Signal.sceneFrame):
            guard case .uint32(let frame)? = arguments.first else { return [] }
            return [Line(path: signal.path, interface: GlassdBus.managerInterface, signal: signal.member,
                         query_id: "frame/\(frame)", text: arguments.dropFirst().first?.string)]
        case (GlassdBus.managerInterface, GlassdBus.Signal.alert):
            return [Line(path: signal.path, interface: GlassdBus.managerInterface, signal: signal.member,
                         text: arguments.first?.string)]
        case (GlassdBus.managerInterface, GlassdBus.Signal.queryFailed):
            return [Line(path: signal.path, interface: GlassdBus.managerInterface, signal: signal.member,
                         query_id: arguments.first?.string, text: arguments.dropFirst(2).first?.string)]
        default:
            return []
        }
    }
}
