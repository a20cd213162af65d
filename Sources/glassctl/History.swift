// SPDX-License-Identifier: GPL-2.0-or-later
import ArgumentParser
import DBusKit
import Foundation
import GlassdAPI
import GlassdContract

struct History: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the last messages, oldest first; or search, export or import them.")

    @OptionGroup var options: GlobalOptions

    @Option(name: .short, help: "How many messages.")
    var n: UInt32 = 20

    @Option(help: "Messages with all these words (any case or order), best matches first.")
    var search: String?

    @Option(help: ArgumentHelp("Write every message to FILE as JSON Lines ('-': standard output).", valueName: "FILE"))
    var export: String?

    @Option(
        name: .customLong("import"),
        help: ArgumentHelp("Add the messages of FILE (JSON Lines, as exported; '-': standard input).", valueName: "FILE"))
    var importFile: String?

    @Flag(help: "The latest turns' timings instead: ms from each turn's start to each stage.")
    var timings = false

    func validate() throws {
        if [search, export, importFile].compactMap({ $0 }).count + (timings ? 1 : 0) > 1 {
            throw ValidationError("Use at most one of --search, --export, --import and --timings.")
        }
    }

    struct Message: Encodable {
        var time_ms: Int64
        var query_id: String
        var role: String
        var text: String
    }

    func run() async throws {
        try await reportingErrors {
            let client = try await options.connect()
            // Long histories take a while; the whole file goes in one call.
            if let export {
                return try await transfer(export, O_WRONLY | O_CREAT | O_TRUNC) { fd in
                    try await client.manager.exportHistory(fd: fd, timeoutSeconds: 3600)
                    return nil
                }
            }
            if let importFile {
                return try await transfer(importFile, O_RDONLY) { fd in
                    try await client.manager.importHistory(fd: fd, timeoutSeconds: 3600)
                }
            }
            if timings {
                let turns = try await TurnTiming.fetch(client, limit: n)
                if options.json { return try printJSON(turns) }
                return print(turns.isEmpty ? "No turns are recorded yet." : TurnTiming.table(turns))
            }
            let rows =
                if let search {
                    try await client.manager.searchHistory(query: search, limit: n)
                } else {
                    try await client.manager.history(limit: n)
                }
            let messages = (rows.elements ?? []).compactMap { row -> Message? in
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

extension History {
    /// Export or import through a descriptor of `path`: glassd reads or writes it itself, so the
    /// file's size never passes through a D-Bus message. `call` returns how many were imported.
    private func transfer(_ path: String, _ flags: Int32, _ call: (Int32) async throws -> UInt32?) async throws {
        let fd = path == "-" ? (flags == O_RDONLY ? 0 : 1) : open(path, flags | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            FileHandle.standardError.write(Data("glassctl: \(path): \(String(cString: strerror(errno)))\n".utf8))
            throw ExitCode.failure
        }
        defer { if path != "-" { close(fd) } }
        if let imported = try await call(fd) {
            if options.json { return try printJSON(["imported": imported]) }
            print("Imported \(imported) messages.")
        } else if options.json {
            try printJSON(["exported": true])
        }
    }
}

struct ClearHistory: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "clear-history", abstract: "Forget the whole conversation.")

    @OptionGroup var options: GlobalOptions

    func run() async throws {
        try await reportingErrors {
            try await options.connect().manager.clearHistory()
            if options.json { try printJSON(["cleared": true]) }
        }
    }
}
