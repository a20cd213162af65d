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

    @Flag(
        inversion: .prefixedNo,
        help: "Let glassd have polkit authenticate you (a password prompt from your desktop or agent) instead of refusing at once (default: on a terminal).")
    var interactive: Bool? = nil

    func connect() async throws -> Client {
        try await Client.connect(bus == .system ? .system : .session, interactive: interactive ?? (isatty(STDIN_FILENO) != 0))
    }
}

/// Runs a subcommand body, turning glassd's errors and glassctl's own into one clear line and a
/// failing exit code.
func reportingErrors(_ body: () async throws -> Void) async throws {
    do {
        try await body()
    } catch let error as BusError {
        var text = "glassctl: \(error.message) (\(error.name))\n"
        if let hint = authorizationHint(error) { text += "glassctl: \(hint)\n" }
        FileHandle.standardError.write(Data(text.utf8))
        throw ExitCode.failure
    } catch let error as ClientError {
        let name = error.glassdName.map { " (\($0))" } ?? ""
        FileHandle.standardError.write(Data("glassctl: \(error.message)\(name)\n".utf8))
        throw ExitCode.failure
    }
}

/// One line on what a refused call needs: the polkit action glassd named, or (a refusal by the
/// bus policy itself) root or group glassd.
func authorizationHint(_ error: BusError) -> String? {
    switch error.name {
    case "org.freedesktop.DBus.Error.AccessDenied", "org.freedesktop.DBus.Error.InteractiveAuthorizationRequired":
        guard let range = error.message.range(of: #"org\.glassd\.[a-z]+"#, options: .regularExpression) else {
            return "needs root or membership in group glassd"
        }
        let action = error.message[range]
        return error.name.hasSuffix("InteractiveAuthorizationRequired")
            ? "needs authorization: \(action) (run glassctl on a terminal, or with --interactive)"
            : "needs authorization: \(action)"
    default:
        return nil
    }
}

/// Prints `value` as JSON on one line.
func printJSON(_ value: some Encodable) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    print(String(decoding: try encoder.encode(value), as: UTF8.self))
}
