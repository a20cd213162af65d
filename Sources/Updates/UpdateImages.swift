// SPDX-License-Identifier: GPL-2.0-or-later
import Crypto
import Firmware
import Foundation
import GlassdAPI
import Glibc
import Glasses
import Monocle
import TOMLKit

/// Why an update was refused before the glasses were touched: a D-Bus error name and a sentence.
public struct UpdateRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    public var name: String
    public var message: String
    public var description: String { message }

    public static func image(_ message: String) -> UpdateRefusal { UpdateRefusal(name: GlassdErrorName.invalidImage, message: message) }
    public static func arguments(_ message: String) -> UpdateRefusal { UpdateRefusal(name: GlassdErrorName.invalidArgs, message: message) }
}

/// The images an update installs, read whole and checked before anything is sent.
public struct UpdateImages: Sendable {
    public struct FirmwareImage: Sendable {
        /// The package file, kept while the glasses may be in their bootloader.
        public var file: [UInt8]
        public var package: DFUPackage
        /// The version it brings, when pinned in the manifest.
        public var version: String?

        public init(file: [UInt8], package: DFUPackage, version: String?) {
            self.file = file
            self.package = package
            self.version = version
        }
    }

    public struct FPGAImage: Sendable {
        public var bytes: [UInt8]
        public var version: String?
        public var sha256: String
    }

    public var firmware: FirmwareImage?
    public var fpga: FPGAImage?
    /// The kind of glasses the manifest pins these for (`kind`, default monocle); nil for files
    /// given to Update, which go to whatever glasses are paired.
    public var kind: GlassesKindName?

    public init(firmware: FirmwareImage? = nil, fpga: FPGAImage? = nil, kind: GlassesKindName? = nil) {
        self.firmware = firmware
        self.fpga = fpga
        self.kind = kind
    }

    /// A file given as a path, or the contents of one passed as a descriptor.
    public enum Source: Sendable {
        case path(String)
        case contents([UInt8])
    }

    /// The images of Update's options (`firmware`, `fpga`: s path or h descriptor), or without
    /// either, those the manifest in `directory` pins.
    public static func load(firmware: Source?, fpga: Source?, directory: String) throws(UpdateRefusal) -> UpdateImages {
        if firmware == nil && fpga == nil { return try fromManifest(in: directory) }
        var images = UpdateImages()
        if let firmware {
            let file = try read(firmware, "firmware")
            images.firmware = FirmwareImage(file: file, package: try package(file, pinned: nil), version: nil)
        }
        if let fpga { images.fpga = try fpgaImage(try read(fpga, "fpga"), version: nil, pinned: nil) }
        return images
    }

    public static func fromManifest(in directory: String) throws(UpdateRefusal) -> UpdateImages {
        let path = directory + "/" + FirmwareManifest.fileName
        guard FileManager.default.fileExists(atPath: path) else {
            throw UpdateRefusal(
                name: GlassdErrorName.notFound,
                message: "No update images: put them and a \(FirmwareManifest.fileName) in \(directory), or pass the files.")
        }
        let manifest = try FirmwareManifest.parse(try read(.path(path), "the manifest"), file: path)
        var images = UpdateImages()
        images.kind = manifest.kind
        if let entry = manifest.firmware {
            let bytes = try read(.path(directory + "/" + entry.file), "firmware")
            images.firmware = FirmwareImage(file: bytes, package: try package(bytes, pinned: entry.sha256), version: entry.version)
        }
        if let entry = manifest.fpga {
            let bytes = try read(.path(directory + "/" + entry.file), "fpga")
            images.fpga = try fpgaImage(bytes, version: entry.version, pinned: entry.sha256)
        }
        return images
    }

    public static func package(_ bytes: [UInt8], pinned: String?) throws(UpdateRefusal) -> DFUPackage {
        do {
            return try DFUPackage(bytes: bytes, pinnedSHA256: pinned)
        } catch {
            throw .image("The firmware package is not usable: \(error).")
        }
    }

    public static func fpgaImage(_ bytes: [UInt8], version: String?, pinned: String?) throws(UpdateRefusal) -> FPGAImage {
        let digest = SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
        if let pinned, pinned.lowercased() != digest {
            throw .image("The FPGA image's SHA-256 is \(digest), not the pinned \(pinned.lowercased()).")
        }
        guard !bytes.isEmpty else { throw .image("The FPGA image is empty.") }
        guard bytes.count <= FPGACommands.doneOffset else {
            throw .image("The FPGA image has \(bytes.count) bytes; the Monocle holds at most \(FPGACommands.doneOffset).")
        }
        return FPGAImage(bytes: bytes, version: version, sha256: digest)
    }

    /// Largest file read: a DFU package or an FPGA image is well under this.
    public static let maxFileBytes = 4 << 20

    public static func read(_ source: Source, _ what: String) throws(UpdateRefusal) -> [UInt8] {
        switch source {
        case .contents(let bytes):
            return bytes
        case .path(let path):
            let fd = open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { throw .image("Cannot read \(what) \(path): \(String(cString: strerror(errno))).") }
            defer { close(fd) }
            return try read(fd, what)
        }
    }

    /// A file's bytes, read with pread (the descriptor's offset is not used). The caller closes `fd`.
    public static func read(_ fd: Int32, _ what: String) throws(UpdateRefusal) -> [UInt8] {
        // A pipe cannot seek: refused, as it could keep the call waiting for ever.
        let size = lseek(fd, 0, SEEK_END)
        guard size >= 0 else { throw .arguments("The \(what) must be a regular file.") }
        guard size <= maxFileBytes else { throw .image("The \(what) file is too large (\(size) bytes).") }
        var bytes = [UInt8](repeating: 0, count: Int(size))
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + done, $0.count - done, off_t(done)) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw .image("Cannot read \(what): \(n < 0 ? String(cString: strerror(errno)) : "it shrank").") }
            done += n
        }
        return bytes
    }
}

/// manifest.toml in the firmware directory: the wanted version of each image, its file (in
/// the same directory) and SHA-256, as a user or a package drops them there.
///
///     [firmware]
///     file = "monocle-firmware-v23.248.0754.zip"
///     version = "v23.248.0754"
///     sha256 = "…"
///     [fpga]                              # a Monocle's only; `kind = "frame"` above for a Frame's firmware
///     file = "monocle-fpga-v23.230.0808.bin"
///     version = "v23.230.0808"
///     sha256 = "…"
public struct FirmwareManifest: Sendable, Equatable {
    public static let fileName = "manifest.toml"

    public struct Entry: Sendable, Equatable {
        public var file: String
        public var version: String
        public var sha256: String
    }

    public var firmware: Entry?
    public var fpga: Entry?
    /// Which glasses the images are for: `kind = "frame"` at the top (a Halo takes a Frame's);
    /// monocle when absent.
    public var kind: GlassesKindName = .monocle

    public static func parse(_ bytes: [UInt8], file: String) throws(UpdateRefusal) -> FirmwareManifest {
        let table: TOMLTable
        do {
            table = try TOMLTable(string: String(decoding: bytes, as: UTF8.self))
        } catch {
            throw .image("\(file) is not valid TOML: \(error).")
        }
        func entry(_ name: String) throws(UpdateRefusal) -> Entry? {
            guard let value = table[name] else { return nil }
            guard let section = value.table, let path = section["file"]?.string, let version = section["version"]?.string,
                let sha = section["sha256"]?.string
            else { throw .image("\(file): [\(name)] needs file, version and sha256 strings.") }
            guard !path.contains("/"), !path.hasPrefix(".") else {
                throw .image("\(file): [\(name)] file must be a name in the same directory.")
            }
            guard sha.count == 64, sha.allSatisfy(\.isHexDigit) else { throw .image("\(file): [\(name)] sha256 must be 64 hex digits.") }
            return Entry(file: path, version: version, sha256: sha.lowercased())
        }
        var kind = GlassesKindName.monocle
        if let value = table["kind"] {
            guard let name = value.string, let named = GlassesKindName(rawValue: name), named != .halo else {
                throw .image("\(file): kind must be \"monocle\" or \"frame\".")
            }
            kind = named
        }
        let manifest = FirmwareManifest(firmware: try entry("firmware"), fpga: try entry("fpga"), kind: kind)
        guard manifest.firmware != nil || manifest.fpga != nil else { throw .image("\(file) names no image.") }
        guard kind == .monocle || manifest.fpga == nil else { throw .image("\(file): only a Monocle has an FPGA image.") }
        return manifest
    }
}
