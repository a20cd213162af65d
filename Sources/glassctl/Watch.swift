// SPDX-License-Identifier: GPL-2.0-or-later
import ArgumentParser
import DBusKit
import Foundation
import GlassdAPI
import GlassdContract

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
                let state = try await client.manager.state
                let paired = try await client.manager.pairedDevice
                for (property, value) in [(GlassdBus.Property.state, state), (GlassdBus.Property.pairedDevice, paired)] {
                    try show(Line(path: GlassdBus.managerPath, interface: GlassdBus.managerInterface, property: property, value: value))
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
        case (GlassdBus.managerInterface, _):
            guard let (queryID, text) = Self.question(signal.member, arguments) else { return [] }
            return [Line(path: signal.path, interface: GlassdBus.managerInterface, signal: signal.member, query_id: queryID, text: text)]
        default:
            return []
        }
    }

    /// A question's signal as watch prints it (its query id, or the frame's, and its text); nil
    /// for others.
    private static func question(_ member: String, _ arguments: [DBusValue]) -> (String?, String)? {
        typealias Manager1 = GlassdBus.Manager1
        return switch member {
        case Manager1.Transcribed.name: (try? Manager1.Transcribed(arguments)).map { ($0.queryID, $0.text) }
        case Manager1.AnswerDelta.name: (try? Manager1.AnswerDelta(arguments)).map { ($0.queryID, $0.text) }
        case Manager1.Answered.name: (try? Manager1.Answered(arguments)).map { ($0.queryID, $0.answer) }
        case Manager1.SceneFrame.name: (try? Manager1.SceneFrame(arguments)).map { ("frame/\($0.frame)", $0.verdict) }
        case Manager1.Alert.name: (try? Manager1.Alert(arguments)).map { (nil, $0.text) }
        case Manager1.QueryFailed.name: (try? Manager1.QueryFailed(arguments)).map { ($0.queryID, $0.message) }
        default: nil
        }
    }
}
