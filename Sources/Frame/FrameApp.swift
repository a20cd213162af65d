// SPDX-License-Identifier: GPL-2.0-or-later
import Glasses

/// glassd's own Lua app for the Frame (written in this project, in Sources/Frame/App), in upload
/// order, main.lua last. The app file's first line is the version global, a placeholder in the
/// source (`GLASSD_APP_VERSION = '-'`) that the upload replaces with the real version, so the
/// running app can say which version it is.
public struct FrameApp: Sendable, Equatable {
    public typealias File = BundledFile

    /// The app, loaded by main.lua (and by `FrameCommands.load`).
    public static let appFile = "glassd_app.lua"
    /// What the app requires of the glasses' own hardware: one per kind.
    public static let hardwareFile = "glassd_hw.lua"
    /// What the firmware runs after a reset.
    public static let mainFile = "main.lua"
    /// The global holding the running app's version.
    public static let versionName = "GLASSD_APP_VERSION"
    /// The version of the stored app, written after every app file: a file there means the
    /// upload before it completed.
    public static let stampFile = "glassd.ver"

    public let files: [File]
    /// SHA-256 over every file's name and contents (the version line left out), in order:
    /// lower-case hex.
    public let version: String

    public init(files: [File]) {
        self.files = files
        version = BundledFile.version(of: files) { Self.withoutVersionLine($0.contents) }
    }

    /// The bytes uploaded for `file`: a leading version line carries the real version.
    public func uploaded(_ file: File) -> [UInt8] {
        guard Self.hasVersionLine(file.contents) else { return file.contents }
        return Array("\(Self.versionName) = '\(version)'\n".utf8) + Self.withoutVersionLine(file.contents)
    }

    /// The version a file's first line names (`GLASSD_APP_VERSION = '…'`), if it has one.
    public static func stampedVersion(in contents: [UInt8]) -> String? {
        guard hasVersionLine(contents) else { return nil }
        let line = String(decoding: contents.prefix { $0 != 0x0A && $0 != 0x0D }, as: UTF8.self)
        let parts = line.split(separator: "'", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[2].allSatisfy({ $0 == " " }) else { return nil }
        return String(parts[1])
    }

    static func hasVersionLine(_ contents: [UInt8]) -> Bool {
        contents.starts(with: Array("\(versionName) =".utf8))
    }

    static func withoutVersionLine(_ contents: [UInt8]) -> [UInt8] {
        guard hasVersionLine(contents) else { return contents }
        guard let newline = contents.firstIndex(of: 0x0A) else { return [] }
        return Array(contents[(newline + 1)...])
    }

    /// The project's own app for a Frame, built into glassd.
    public static let bundled = FrameApp(files: [
        File(name: appFile, contents: PackageResources.glassd_app_lua),
        File(name: hardwareFile, contents: PackageResources.glassd_hw_lua),
        File(name: mainFile, contents: PackageResources.main_lua),
    ])

    /// `app` with another kind's hardware file in place of its own.
    public init(bundled app: FrameApp, hardware: [UInt8]) {
        self.init(files: app.files.map { $0.name == Self.hardwareFile ? File(name: $0.name, contents: hardware) : $0 })
    }
}
