// SPDX-License-Identifier: GPL-2.0-or-later
import Glasses
import TOMLKit

/// manifest.toml in the firmware directory: the kind of glasses the images are for, and for each
/// component the wanted version, its file (in the same directory) and SHA-256, as a user or a
/// package drops them there. A table per component, named as the kind's updaters name them.
///
///     kind = "monocle"                    # the first registered kind when absent
///     [firmware]
///     file = "monocle-firmware-v23.248.0754.zip"
///     version = "v23.248.0754"
///     sha256 = "…"
///     [fpga]                              # a Monocle's only
///     file = "monocle-fpga-v23.230.0808.bin"
///     version = "v23.230.0808"
///     sha256 = "…"
public struct FirmwareManifest: Sendable, Equatable {
    public static let fileName = "manifest.toml"

    public struct Entry: Sendable, Equatable {
        public var file: String
        public var version: String
        public var sha256: String

        public init(file: String, version: String, sha256: String) {
            self.file = file
            self.version = version
            self.sha256 = sha256
        }
    }

    public var entries: [String: Entry]
    /// Which glasses the images are for: a kind's own name (a Halo takes a Frame's).
    public var kind: GlassesKindName

    public init(entries: [String: Entry], kind: GlassesKindName) {
        self.entries = entries
        self.kind = kind
    }

    public static func parse(_ bytes: [UInt8], file: String, kinds: [GlassesKind]) throws(UpdateRefusal) -> FirmwareManifest {
        let table: TOMLTable
        do {
            table = try TOMLTable(string: String(decoding: bytes, as: UTF8.self))
        } catch {
            throw .image("\(file) is not valid TOML: \(error).")
        }
        guard var kind = kinds.first else { throw .image("\(file): glassd knows no kind of glasses.") }
        if let value = table["kind"] {
            let names = kinds.map { "\"\($0.name.rawValue)\"" }.joined(separator: " or ")
            guard let name = value.string, let named = kinds.first(where: { $0.name.rawValue == name }) else {
                throw .image("\(file): kind must be \(names).")
            }
            kind = named
        }
        var entries: [String: Entry] = [:]
        for key in table.keys where key != "kind" {
            guard kind.updater(key) != nil else {
                let holders = kinds.filter { $0.updater(key) != nil }.map(\.title)
                throw .image(
                    holders.isEmpty
                        ? "\(file): [\(key)] is no component glassd updates."
                        : "\(file): [\(key)] is for \(holders.joined(separator: " or ")), not \(kind.title).")
            }
            guard let section = table[key]?.table, let path = section["file"]?.string, let version = section["version"]?.string,
                let sha = section["sha256"]?.string
            else { throw .image("\(file): [\(key)] needs file, version and sha256 strings.") }
            guard !path.contains("/"), !path.hasPrefix(".") else {
                throw .image("\(file): [\(key)] file must be a name in the same directory.")
            }
            guard sha.count == 64, sha.allSatisfy(\.isHexDigit) else { throw .image("\(file): [\(key)] sha256 must be 64 hex digits.") }
            entries[key] = Entry(file: path, version: version, sha256: sha.lowercased())
        }
        guard !entries.isEmpty else { throw .image("\(file) names no image.") }
        return FirmwareManifest(entries: entries, kind: kind.name)
    }
}
