// SPDX-License-Identifier: GPL-2.0-or-later
import ArgumentParser
import DBusKit
import Foundation
import GlassdAPI
import GlassdDaemon
import Logging

@main
struct Glassd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "glassd", abstract: "The smart-glasses daemon: org.glassd on D-Bus.", version: glassdVersion)

    enum Bus: String, ExpressibleByArgument, CaseIterable {
        case system, session
    }

    @Option(help: "The bus to serve org.glassd on.")
    var bus: Bus = .system

    @Option(help: "The configuration file (TOML).")
    var config: String?

    @Option(name: .customLong("state-dir"), help: "Where the database lives when $STATE_DIRECTORY is unset.")
    var stateDirectory: String?

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel: String = "info"

    func run() async throws {
        guard let level = Logger.Level(rawValue: logLevel) else {
            throw ValidationError("unknown log level \(logLevel)")
        }
        do {
            try await Daemon.run(
                DaemonOptions(
                    bus: bus == .system ? .system : .session, configPath: config, stateDirectory: stateDirectory,
                    logLevel: level))
        } catch let error as Config.Error {
            FileHandle.standardError.write(Data("glassd: \(error.description)\n".utf8))
            throw ExitCode(78)  // EX_CONFIG
        } catch let error as BusError {
            FileHandle.standardError.write(Data("glassd: \(error.message)\n".utf8))
            throw ExitCode.failure
        }
    }
}
