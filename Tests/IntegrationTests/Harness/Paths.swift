// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation

/// Where the built binaries and the test fixtures are.
enum Paths {
    /// The build folder holding glassd and glassctl: next to the test runner, unless GLASSD_BIN_DIR says otherwise.
    static let bin: String = {
        if let dir = ProcessInfo.processInfo.environment["GLASSD_BIN_DIR"] { return dir }
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? ""
        return (exe as NSString).deletingLastPathComponent
    }()

    static var glassd: String { bin + "/glassd" }
    static var glassctl: String { bin + "/glassctl" }
    /// glassd with the test-only kinds registered (Tests/TwinDaemon).
    static var twinDaemon: String { bin + "/glassd-twin" }

    /// The repository root, from this file's place in it.
    static let root: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<4 { url.deleteLastPathComponent() }
        return url.path
    }()

    static var fixtures: String { root + "/Tests/Fixtures" }

    static func temporaryDirectory() throws -> String {
        let dir = NSTemporaryDirectory() + "glassd-test-" + UUID().uuidString.prefix(8)
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }
}
