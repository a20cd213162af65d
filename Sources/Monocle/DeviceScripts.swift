// SPDX-License-Identifier: GPL-2.0-or-later
import Glasses

/// The MicroPython scripts glassd runs on the Monocle (written in this project, in
/// Sources/Monocle/DeviceScripts), in upload order, main.py last.
public struct DeviceScripts: Sendable, Equatable {
    public typealias File = BundledFile

    /// The entry point; it is uploaded with the version stamped in as its first line.
    public static let mainFile = "main.py"
    /// The name of the stamp, a global of main.py.
    public static let versionName = "GLASSD_VERSION"
    /// A file glassd creates on the device after an upload: the scripts show their welcome once.
    public static let freshMarker = "glassd_new"

    public let files: [File]
    /// SHA-256 over every file's name and contents, in order: lower-case hex.
    public let version: String

    public init(files: [File]) {
        self.files = files
        version = BundledFile.version(of: files)
    }

    /// The bytes uploaded for `file`: main.py gets the version as its first line.
    public func uploaded(_ file: File) -> [UInt8] {
        guard file.name == Self.mainFile else { return file.contents }
        return Array("\(Self.versionName) = \"\(version)\"\n".utf8) + file.contents
    }

    /// The project's own scripts, built into glassd.
    public static let bundled = DeviceScripts(files: [
        File(name: "glassd_ui.py", contents: PackageResources.glassd_ui_py),
        File(name: "glassd_link.py", contents: PackageResources.glassd_link_py),
        File(name: "glassd_media.py", contents: PackageResources.glassd_media_py),
        File(name: mainFile, contents: PackageResources.main_py),
    ])
}
