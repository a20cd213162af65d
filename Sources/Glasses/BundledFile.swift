// SPDX-License-Identifier: GPL-2.0-or-later
import Crypto

/// A file glassd puts on the glasses (a Monocle's scripts, a Frame's Lua app), built into glassd.
public struct BundledFile: Sendable, Equatable {
    public var name: String
    public var contents: [UInt8]

    public init(name: String, contents: [UInt8]) {
        self.name = name
        self.contents = contents
    }

    /// SHA-256 over every file's name and contents (as `contents` gives them), each followed by a
    /// NUL, in order: lower-case hex. The version glassd compares with what the glasses hold.
    public static func version(of files: [BundledFile], contents: (BundledFile) -> [UInt8] = \.contents) -> String {
        var hash = SHA256()
        for file in files {
            hash.update(data: Array(file.name.utf8) + [0])
            hash.update(data: contents(file) + [0])
        }
        return hash.finalize().map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }
}
