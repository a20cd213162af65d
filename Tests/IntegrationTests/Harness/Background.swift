// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation
import Subprocess
import SystemPackage

/// A child process that runs while a body runs. Its stderr goes to `log`.
struct Background {
    let execution: Execution<NoInput, SequenceOutput, FileDescriptorOutput>
    let log: String
    /// The rest of stdout, after the first line, for a process started with `firstLine`.
    var rest: Lines?
    var pid: Int32 { execution.processIdentifier.value }

    /// The lines a process prints after its first.
    actor Lines {
        var iterator: SubprocessOutputSequence.StringSequence<UTF8>.AsyncIterator
        init(_ iterator: sending SubprocessOutputSequence.StringSequence<UTF8>.AsyncIterator) { self.iterator = iterator }
        func next() async throws -> String? {
            var current = iterator
            defer { iterator = current }
            return try await current.next(isolation: self)
        }
    }

    /// Its next line on stdout (after the first), nil at the end.
    func nextLine() async throws -> String? {
        try await rest?.next()
    }

    func kill9() {
        try? execution.send(signal: .kill)
    }

    /// Returns when its stdout ends: it, and every child that kept its stdout, have closed their
    /// files on the way out (a process may not be a zombie yet then). Only for a process started
    /// without `firstLine` (its stdout can be read once).
    func untilStdoutEnds() async throws {
        for try await _ in execution.standardOutput.strings() {}
    }
}

/// Runs `executable` with `arguments`, hands `body` the first line it prints on stdout (when
/// `firstLine` is set: an address or port), and stops it with SIGTERM, then SIGKILL, afterwards.
func withBackground<R: Sendable>(
    _ executable: String, _ arguments: [String], environment: [String: String] = [:], log: String,
    firstLine: Bool,
    _ body: (Background, String) async throws -> R
) async throws -> R {
    let logFD = try FileDescriptor.open(
        FilePath(log), .writeOnly, options: [.create, .append], permissions: [.ownerReadWrite])
    var env: [Environment.Key: String?] = [:]
    for (key, value) in environment { env[Environment.Key(rawValue: key)!] = value }
    let result = try await run(
        .path(FilePath(executable)), arguments: Arguments(arguments), environment: .inherit.updating(env),
        input: .none, output: .sequence, error: .fileDescriptor(logFD, closeAfterSpawningProcess: true)
    ) { execution in
        var process = Background(execution: execution, log: log)
        var line = ""
        if firstLine {
            var lines = execution.standardOutput.strings().makeAsyncIterator()
            line = try await lines.next() ?? ""
            process.rest = Background.Lines(lines)
        }
        do {
            let value = try await body(process, line)
            await execution.teardown(using: [.gracefulShutDown(allowedDurationToNextStep: .seconds(10))])
            return value
        } catch {
            await execution.teardown(using: [.gracefulShutDown(allowedDurationToNextStep: .seconds(2))])
            throw error
        }
    }
    return result.closureResult
}

/// Runs a command to completion and collects what it printed.
struct CommandResult: Sendable {
    var status: Int32
    var stdout: String
    var stderr: String
    var ok: Bool { status == 0 }
}

func runCommand(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) async throws
    -> CommandResult
{
    var env: [Environment.Key: String?] = [:]
    for (key, value) in environment { env[Environment.Key(rawValue: key)!] = value }
    let result = try await run(
        executable.hasPrefix("/") ? .path(FilePath(executable)) : .name(executable), arguments: Arguments(arguments),
        environment: .inherit.updating(env), input: .none, output: .string(limit: 1 << 22),
        error: .string(limit: 1 << 20))
    let status: Int32 =
        switch result.terminationStatus {
        case .exited(let code): code
        case .signaled(let signal): 128 + signal
        }
    return CommandResult(status: status, stdout: result.standardOutput, stderr: result.standardError)
}
