// SPDX-License-Identifier: GPL-2.0-or-later
import Crypto
import Foundation
import ZIPFoundation

/// An application update as nrfutil packs it: manifest.json naming the init packet (.dat) and
/// the image (.bin). Checked whole before anything is sent to the glasses.
public struct DFUPackage: Sendable, Equatable {
    public struct Limits: Sendable, Equatable {
        /// A signed init command is about 141 bytes; anything near a page is not one.
        public var initPacket = 511
        /// The Monocle's application area is well under this.
        public var image = 1 << 20
        /// The file itself (compressed, plus the manifest and ZIP overhead).
        public var package = 2 << 20

        public init() {}
    }

    /// `application.dat`: the signed init command.
    public let initPacket: [UInt8]
    /// `application.bin`: the application image.
    public let image: [UInt8]
    /// SHA-256 of the package file, lowercase hex.
    public let sha256: String

    /// Reads a package from its bytes; `pinnedSHA256` (hex, any case) is checked first when given.
    public init(bytes: [UInt8], pinnedSHA256: String? = nil, limits: Limits = Limits()) throws(DFUPackageError) {
        guard bytes.count <= limits.package else { throw .packageTooLarge(size: bytes.count, limit: limits.package) }
        sha256 = SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
        if let pinned = pinnedSHA256, pinned.lowercased() != sha256 {
            throw .checksumMismatch(expected: pinned.lowercased(), actual: sha256)
        }
        let archive = try Self.openArchive(bytes)
        let manifest = try Self.manifest(
            try Self.extract("manifest.json", from: archive, limit: 64 << 10, missing: .missingManifest))
        initPacket = try Self.extract(
            manifest.datFile, from: archive, limit: limits.initPacket,
            tooLarge: { .initPacketTooLarge(size: $0, limit: limits.initPacket) })
        image = try Self.extract(
            manifest.binFile, from: archive, limit: limits.image,
            tooLarge: { .imageTooLarge(size: $0, limit: limits.image) })
        let described = try InitPacket(initPacket)
        guard described.appSize == image.count else { throw .imageSizeMismatch(image: image.count, initPacket: described.appSize) }
        if let wanted = described.sha256 {
            // nrfutil stores the digest byte-reversed (little-endian); take either order.
            let digest = Array(SHA256.hash(data: image))
            guard wanted == digest || wanted == digest.reversed() else { throw .imageHashMismatch }
        }
    }

    /// Reads the package at `path`.
    public init(path: String, pinnedSHA256: String? = nil, limits: Limits = Limits()) throws(DFUPackageError) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .unreadable("\(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        try self.init(fileDescriptor: fd, pinnedSHA256: pinnedSHA256, limits: limits)
    }

    /// Reads the package from `fd` (to its end; the caller keeps and closes it), e.g. one passed
    /// over D-Bus.
    public init(fileDescriptor fd: Int32, pinnedSHA256: String? = nil, limits: Limits = Limits())
        throws(DFUPackageError)
    {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n == 0 { break }
            if n < 0 {
                if errno == EINTR { continue }
                throw .unreadable(String(cString: strerror(errno)))
            }
            bytes += chunk[..<n]
            // Stop reading early: a huge file is refused anyway.
            guard bytes.count <= limits.package else {
                throw .packageTooLarge(size: bytes.count, limit: limits.package)
            }
        }
        try self.init(bytes: bytes, pinnedSHA256: pinnedSHA256, limits: limits)
    }

    // MARK: Reading

    private struct Manifest: Decodable {
        struct Part: Decodable {
            let bin_file: String?
            let dat_file: String?
        }
        struct Parts: Decodable {
            let application: Part?
            let softdevice: Part?
            let bootloader: Part?
            let softdevice_bootloader: Part?
        }
        let manifest: Parts
    }

    private static func manifest(_ bytes: [UInt8]) throws(DFUPackageError) -> (binFile: String, datFile: String) {
        let parsed: Manifest
        do {
            parsed = try JSONDecoder().decode(Manifest.self, from: Data(bytes))
        } catch {
            throw .invalidManifest("not a DFU manifest")
        }
        let others = [
            ("softdevice", parsed.manifest.softdevice), ("bootloader", parsed.manifest.bootloader),
            ("softdevice_bootloader", parsed.manifest.softdevice_bootloader),
        ].filter { $0.1 != nil }.map(\.0)
        guard others.isEmpty else { throw .notApplicationOnly(others) }
        guard let application = parsed.manifest.application else { throw .invalidManifest("no application") }
        guard let bin = application.bin_file, !bin.isEmpty else { throw .invalidManifest("no application bin_file") }
        guard let dat = application.dat_file, !dat.isEmpty else { throw .invalidManifest("no application dat_file") }
        return (bin, dat)
    }

    /// The archive over a private temporary copy of `bytes`, unlinked at once. Not ZIPFoundation's
    /// in-memory archive: its memory file traps when a damaged directory points past the end,
    /// where a real file just reads short.
    private static func openArchive(_ bytes: [UInt8]) throws(DFUPackageError) -> Archive {
        var template = Array((NSTemporaryDirectory() + "/glassd-dfu-XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { throw .unreadable("a temporary copy: \(String(cString: strerror(errno)))") }
        let path = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        defer { unlink(path) }
        let written = bytes.withUnsafeBytes { buffer in
            var done = 0
            while done < buffer.count {
                let n = write(fd, buffer.baseAddress! + done, buffer.count - done)
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { return false }
                done += n
            }
            return true
        }
        close(fd)
        guard written else { throw .unreadable("a temporary copy: \(String(cString: strerror(errno)))") }
        do {
            return try Archive(url: URL(fileURLWithPath: path), accessMode: .read)
        } catch {
            throw .corruptZip
        }
    }

    /// The whole of entry `name`, refused past `limit` bytes (whatever size the entry claims).
    private static func extract(
        _ name: String, from archive: Archive, limit: Int, missing: DFUPackageError? = nil,
        tooLarge: (Int) -> DFUPackageError = { _ in .corruptZip }
    ) throws(DFUPackageError) -> [UInt8] {
        guard let entry = archive[name], entry.type == .file else { throw missing ?? .missingFile(name) }
        guard entry.uncompressedSize <= UInt64(limit) else { throw tooLarge(Int(clamping: entry.uncompressedSize)) }
        var bytes: [UInt8] = []
        var overflow = false
        let crc: UInt32
        do {
            crc = try archive.extract(entry, skipCRC32: false) { chunk in
                bytes += chunk
                if bytes.count > limit {
                    overflow = true
                    throw DFUPackageError.corruptZip
                }
            }
        } catch {
            throw overflow ? tooLarge(bytes.count) : .corruptZip
        }
        // This extract returns the CRC but does not compare it: a damaged entry must not pass.
        guard crc == entry.checksum, UInt64(bytes.count) == entry.uncompressedSize else { throw .corruptZip }
        guard !bytes.isEmpty else { throw .emptyFile(name) }
        return bytes
    }
}
