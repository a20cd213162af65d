// SPDX-License-Identifier: GPL-2.0-or-later
import ArgumentParser
import DBusKit
import Foundation

/// Options every subcommand takes.
struct GlobalOptions: ParsableArguments {
    enum Bus: String, ExpressibleByArgument, CaseIterable {
        case system, session
    }

    @Option(help: "The bus glassd is on.")
    var bus: Bus = .system

    @Flag(help: "Print JSON only.")
    var json = false

    func connect() async throws -> Client {
        try await Client.connect(bus == .system ? .system : .session)
    }
}

/// Runs a subcommand body, turning D-Bus errors into one clear line and a failing exit code.
func reportingErrors(_ body: () async throws -> Void) async throws {
    do {
        try await body()
    } catch let error as BusError {
        FileHandle.standardError.write(Data("glassctl: \(error.message) (\(error.name))\n".utf8))
        throw ExitCode.failure
    }
}

/// Prints `value` as JSON on one line.
func printJSON(_ value: some Encodable) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    print(String(decoding: try encoder.encode(value), as: UTF8.self))
}
