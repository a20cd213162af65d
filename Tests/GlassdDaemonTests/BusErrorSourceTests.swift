// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation
import Testing

/// D-Bus errors are made in one place: product and device code throw their own typed errors, and
/// the daemon's ErrorMapping names them on the bus. A scan of the sources keeps it so.
@Suite("D-Bus errors are made only by the mapping", .timeLimit(.minutes(5)))
struct BusErrorSourceTests {
    /// Where a BusError may be made: DBusKit itself, the mapping, and the pairing agent's replies
    /// in BlueZ's protocol (not glassd's API).
    static let allowed = ["Sources/DBusKit/", "Sources/GlassdDaemon/ErrorMapping.swift", "Sources/Bluetooth/PairingRefusal.swift"]
    /// Still making their own: the update service, being rewritten separately.
    static let pending: [String] = []

    static var packageRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    /// Lines (outside comments) that construct a BusError: `BusError(`, `BusError.failed(` and the like.
    static func constructions(in text: String) -> [String] {
        let pattern = /BusError\s*(\(|\.(invalidArgs|failed|system)\s*\()/
        return text.split(separator: "\n", omittingEmptySubsequences: false).compactMap { line in
            let code = line.split(separator: "//", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            return code.contains(pattern) ? String(line) : nil
        }
    }

    @Test("the scan finds the constructions it looks for, and not catches or types")
    func scanner() {
        #expect(Self.constructions(in: "throw BusError(name: n, message: m)").count == 1)
        #expect(Self.constructions(in: "x = BusError.invalidArgs(\"no\")\ny = BusError.failed (\"f\")").count == 2)
        #expect(Self.constructions(in: "} catch let error as BusError {\nfunc f() throws(BusError)\n// BusError(").isEmpty)
    }

    @Test("no source file outside the mapping and DBusKit constructs a BusError")
    func onlyTheMapping() throws {
        let sources = Self.packageRoot.appendingPathComponent("Sources")
        let files = try #require(FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil))
        var scanned = 0
        var offenders: [String] = []
        for case let url as URL in files where url.pathExtension == "swift" {
            let path = String(url.path.dropFirst(Self.packageRoot.path.count + 1))
            scanned += 1
            guard !(Self.allowed + Self.pending).contains(where: { path.hasPrefix($0) }) else { continue }
            let text = try String(contentsOf: url, encoding: .utf8)
            offenders += Self.constructions(in: text).map { "\(path): \($0.trimmingCharacters(in: .whitespaces))" }
        }
        #expect(scanned > 100, "the sources were not found under \(sources.path)")
        #expect(offenders.isEmpty, "\(offenders.joined(separator: "\n"))")
    }
}
