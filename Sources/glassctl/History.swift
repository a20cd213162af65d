// SPDX-License-Identifier: GPL-2.0-or-later
import ArgumentParser
import DBusKit
import Foundation

struct History: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show the conversation, oldest first.")

    @OptionGroup var options: GlobalOptions

    @Option(name: .short, help: "How many messages.")
    var n: UInt32 = 20

    struct Message: Encodable {
        var time_ms: Int64
        var query_id: String
        var role: String
        var text: String
    }

    func run() async throws {
        try await reportingErrors {
            let client = try await options.connect()
            let reply = try await client.call("History", [.uint32(n)])
            let messages = (reply.first?.elements ?? []).compactMap { row -> Message? in
                guard let f = row.elements, f.count == 4, let t = f[0].int64, let id = f[1].string,
                    let role = f[2].string, let text = f[3].string
                else { return nil }
                return Message(time_ms: t, query_id: id, role: role, text: text)
            }
            if options.json { return try printJSON(messages) }
            let format = DateFormatter()
            format.dateFormat = "yyyy-MM-dd HH:mm:ss"
            for m in messages {
                let when = format.string(from: Date(timeIntervalSince1970: Double(m.time_ms) / 1000))
                print("\(when)  \(m.role.padding(toLength: 9, withPad: " ", startingAt: 0))  \(m.text)")
            }
        }
    }
}

struct ClearHistory: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "clear-history", abstract: "Forget the whole conversation.")

    @OptionGroup var options: GlobalOptions

    func run() async throws {
        try await reportingErrors {
            _ = try await options.connect().call("ClearHistory")
            if options.json { try printJSON(["cleared": true]) }
        }
    }
}
