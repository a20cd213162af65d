// SPDX-License-Identifier: GPL-2.0-or-later
import ArgumentParser
import Audio
import Concurrency
import DBusKit
import Foundation
import GlassdAPI
import GlassdConfig
import GlassdDaemon
import Glasses
import Logging
import Wake

/// glassd's command line, run by an executable that names the kinds of glasses it serves: the
/// daemon's `main.swift` registers them in one line (a test build adds its own kinds the same way).
public struct GlassdCommand: AsyncParsableCommand {
    /// The kinds of glasses registered, in the order a device is matched against them.
    @TaskLocal static var kinds: [GlassesKind] = []

    /// Parses the arguments and runs glassd with `kinds`.
    public static func main(kinds: [GlassesKind]) async {
        await $kinds.withValue(kinds) { await main() }
    }

    public init() {}

    public static let configuration = CommandConfiguration(
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

    @Option(
        name: .customLong("check-wake"),
        help: "Print where a recording (a 16-bit WAV file) says the wake phrase of the configuration's [wake], then exit.")
    var checkWake: String?

    public func run() async throws {
        if let checkWake { return try Self.check(wav: checkWake, configPath: config ?? Config.defaultPath) }
        guard let level = Logger.Level(rawValue: logLevel) else {
            throw ValidationError("unknown log level \(logLevel)")
        }
        do {
            try await Daemon.run(
                DaemonOptions(
                    bus: bus == .system ? .system : .session, configPath: config, stateDirectory: stateDirectory,
                    logLevel: level, kinds: Self.kinds))
        } catch let error as Config.Error {
            FileHandle.standardError.write(Data("glassd: \(error.description)\n".utf8))
            throw ExitCode(78)  // EX_CONFIG
        } catch let error as BusError {
            FileHandle.standardError.write(Data("glassd: \(error.message)\n".utf8))
            throw ExitCode.failure
        } catch let error as ResourceError {
            // Out of descriptors or threads at start: said plainly, no trap.
            FileHandle.standardError.write(Data("glassd: cannot start: \(error)\n".utf8))
            throw ExitCode(71)  // EX_OSERR
        }
    }

    /// The wake times, one per line in seconds, then how many: a phrase and a sensitivity tried on
    /// one's own recording before glassd listens with them. Without [wake], "hey glasses".
    static func check(wav path: String, configPath: String) throws {
        func fail(_ message: String) -> ExitCode {
            FileHandle.standardError.write(Data("glassd: \(message)\n".utf8))
            return ExitCode(65)  // EX_DATAERR
        }
        let settings: WakeSettings
        switch Result(catching: { () throws(Config.Error) -> WakeSettings? in
            FileManager.default.fileExists(atPath: configPath) ? try Config.load(path: configPath).wake : nil
        }) {
        case .success(let wake): settings = wake ?? WakeSettings(phrase: "hey glasses")
        case .failure(let error):
            FileHandle.standardError.write(Data("glassd: \(error.description)\n".utf8))
            throw ExitCode(78)  // EX_CONFIG
        }
        guard let bytes = FileManager.default.contents(atPath: path) else { throw fail("cannot read \(path)") }
        do {
            let spotter = try PhraseSpotter(settings)
            let times = try WakeCheck.wakes(in: Array(bytes), spotter: spotter)
            for time in times { print(String(format: "%.2f", time)) }
            print("\(times.count) wake(s) on \"\(spotter.phrase)\" (\(settings.sensitivity.rawValue))")
        } catch let error as WakeError {
            throw fail(error.description)
        } catch AudioError.unsupportedInput(let why) {
            throw fail("\(path): \(why)")
        } catch {
            throw fail("\(path): \(error)")
        }
    }
}
