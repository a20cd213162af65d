// SPDX-License-Identifier: GPL-2.0-or-later
import Crypto
import Firmware
import Foundation
import Testing
import TestSupport
import ZIPFoundation

@Suite("DFU package", .timeLimit(.minutes(5)))
struct DFUPackageTests {
    static let manifest = TestPackages.manifest
    static let bin = SecureDFUTests.bytes(20_000, seed: 6)
    static let dat = InitPackets.signed(for: bin)

    static func zip(_ files: [(String, [UInt8])]) throws -> [UInt8] { try TestPackages.zip(files) }

    static func valid() throws -> [UInt8] {
        try zip([("manifest.json", Array(manifest.utf8)), ("application.dat", dat), ("application.bin", bin)])
    }

    static func sha256(_ bytes: [UInt8]) -> String {
        SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
    }

    @Test("A valid package yields its init packet and image")
    func valid() throws {
        let bytes = try Self.valid()
        let package = try DFUPackage(bytes: bytes)
        #expect(package.initPacket == Self.dat)
        #expect(package.image == Self.bin)
        #expect(package.sha256 == Self.sha256(bytes))
        // The pin is checked in any case.
        _ = try DFUPackage(bytes: bytes, pinnedSHA256: Self.sha256(bytes).uppercased())
    }

    @Test("The image must be the one the init packet describes: its size, its hash; a packet that is no protobuf is refused")
    func initPacketChecks() throws {
        let manifest = Array(Self.manifest.utf8)
        func package(_ dat: [UInt8], _ bin: [UInt8] = Self.bin) throws -> DFUPackage {
            try DFUPackage(bytes: try Self.zip([("manifest.json", manifest), ("application.dat", dat), ("application.bin", bin)]))
        }
        // The digest in either byte order; an unsigned packet without a hash.
        _ = try package(InitPackets.signed(for: Self.bin, hash: Array(SHA256.hash(data: Self.bin))))
        _ = try package(InitPackets.plain(appSize: Self.bin.count))
        #expect(throws: DFUPackageError.imageSizeMismatch(image: 10_000, initPacket: 20_000)) {
            try package(Self.dat, Array(Self.bin.prefix(10_000)))
        }
        var changed = Self.bin
        changed[1234] ^= 0x40
        #expect(throws: DFUPackageError.imageHashMismatch) { try package(Self.dat, changed) }
        #expect(throws: DFUPackageError.invalidInitPacket("no application size")) {
            try package(InitPackets.plain(appSize: 0))
        }
        for garbage in [[UInt8](repeating: 0xFF, count: 141), [0x0A, 0x7F, 0x01], [0x0B], SecureDFUTests.bytes(141, seed: 5)] {
            #expect(throws: DFUPackageError.self) { try package(garbage) }
        }
    }

    @Test("A wrong pinned SHA-256 is refused, naming both")
    func wrongChecksum() throws {
        let bytes = try Self.valid()
        let pinned = String(repeating: "ab", count: 32)
        #expect(throws: DFUPackageError.checksumMismatch(expected: pinned, actual: Self.sha256(bytes))) {
            try DFUPackage(bytes: bytes, pinnedSHA256: pinned)
        }
    }

    @Test("Missing parts are named")
    func missing() throws {
        let manifest = Array(Self.manifest.utf8)
        #expect(throws: DFUPackageError.missingManifest) {
            try DFUPackage(bytes: try Self.zip([("application.dat", Self.dat), ("application.bin", Self.bin)]))
        }
        #expect(throws: DFUPackageError.missingFile("application.bin")) {
            try DFUPackage(bytes: try Self.zip([("manifest.json", manifest), ("application.dat", Self.dat)]))
        }
        #expect(throws: DFUPackageError.missingFile("application.dat")) {
            try DFUPackage(bytes: try Self.zip([("manifest.json", manifest), ("application.bin", Self.bin)]))
        }
        #expect(throws: DFUPackageError.emptyFile("application.dat")) {
            try DFUPackage(
                bytes: try Self.zip([
                    ("manifest.json", manifest), ("application.dat", []), ("application.bin", Self.bin),
                ]))
        }
    }

    @Test("Manifests that are not an application-only DFU manifest are refused")
    func manifests() throws {
        func package(_ manifest: String) throws -> DFUPackage {
            try DFUPackage(
                bytes: try Self.zip([
                    ("manifest.json", Array(manifest.utf8)), ("application.dat", Self.dat),
                    ("application.bin", Self.bin),
                ]))
        }
        #expect(throws: DFUPackageError.notApplicationOnly(["softdevice"])) {
            try package(
                #"{"manifest":{"application":{"bin_file":"application.bin","dat_file":"application.dat"},"softdevice":{"bin_file":"sd.bin","dat_file":"sd.dat"}}}"#
            )
        }
        #expect(throws: DFUPackageError.notApplicationOnly(["bootloader"])) {
            try package(#"{"manifest":{"bootloader":{"bin_file":"bl.bin","dat_file":"bl.dat"}}}"#)
        }
        #expect(throws: DFUPackageError.invalidManifest("no application")) { try package(#"{"manifest":{}}"#) }
        #expect(throws: DFUPackageError.invalidManifest("no application dat_file")) {
            try package(#"{"manifest":{"application":{"bin_file":"application.bin"}}}"#)
        }
        #expect(throws: DFUPackageError.invalidManifest("not a DFU manifest")) { try package("not json") }
        #expect(throws: DFUPackageError.invalidManifest("not a DFU manifest")) { try package(#"{"manifest":[1]}"#) }
    }

    @Test("Sizes past the limits are refused")
    func limits() throws {
        var limits = DFUPackage.Limits()
        limits.image = 10_000
        #expect(throws: DFUPackageError.imageTooLarge(size: 20_000, limit: 10_000)) {
            try DFUPackage(bytes: try Self.valid(), limits: limits)
        }
        #expect(throws: DFUPackageError.initPacketTooLarge(size: 600, limit: 511)) {
            try DFUPackage(
                bytes: try Self.zip([
                    ("manifest.json", Array(Self.manifest.utf8)),
                    ("application.dat", SecureDFUTests.bytes(600, seed: 1)),
                    ("application.bin", Self.bin),
                ]))
        }
        limits = DFUPackage.Limits()
        limits.package = 100
        #expect(throws: DFUPackageError.packageTooLarge(size: try Self.valid().count, limit: 100)) {
            try DFUPackage(bytes: try Self.valid(), limits: limits)
        }
    }

    @Test("Not a ZIP at all")
    func garbage() {
        #expect(throws: DFUPackageError.corruptZip) { try DFUPackage(bytes: []) }
        #expect(throws: DFUPackageError.corruptZip) { try DFUPackage(bytes: Array("PK not really".utf8)) }
        #expect(throws: DFUPackageError.corruptZip) { try DFUPackage(bytes: SecureDFUTests.bytes(5000, seed: 2)) }
    }

    @Test("From a path and from a file descriptor")
    func fromFile() throws {
        let bytes = try Self.valid()
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("glassd-dfu-\(UUID()).zip").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        #expect(try DFUPackage(path: path, pinnedSHA256: Self.sha256(bytes)).image == Self.bin)
        let fd = open(path, O_RDONLY)
        defer { close(fd) }
        #expect(try DFUPackage(fileDescriptor: fd).initPacket == Self.dat)
        #expect(throws: DFUPackageError.self) { try DFUPackage(path: path + ".absent") }
    }

    /// Seconds of work: it yields between attempts, or it would hold one of the pool's two threads.
    @Test("Every truncation and thousands of mutations of a package: a typed error or a package, never a crash")
    func fuzz() async throws {
        let bytes = try Self.valid()
        var outcomes: [String: Int] = [:]
        func attempt(_ candidate: [UInt8]) {
            do {
                let package = try DFUPackage(bytes: candidate)
                // Only harmless damage gets through (timestamps, attributes): ZIP's CRC guards the contents.
                #expect(package.initPacket == Self.dat && package.image == Self.bin)
                outcomes["ok", default: 0] += 1
            } catch {
                outcomes["\(error)".prefix(20).description, default: 0] += 1
            }
        }
        for length in stride(from: 0, to: bytes.count, by: 17) {
            attempt(Array(bytes[..<length]))
            await Task.yield()
        }
        var x: UInt64 = 42
        func next() -> Int {
            x = x &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int(truncatingIfNeeded: x >> 33)
        }
        // GLASSD_FUZZ_LONG=1 runs 20,000 (about 15 s) instead of 800.
        for _ in 0..<(ProcessInfo.processInfo.environment["GLASSD_FUZZ_LONG"] == nil ? 800 : 20_000) {
            var candidate = bytes
            for _ in 0..<(1 + next() % 4) {
                // Mostly the headers and the central directory, where the parser makes its decisions.
                let index = next() % 3 == 0 ? next() % candidate.count : max(0, candidate.count - 1 - next() % 200)
                candidate[index] = UInt8(truncatingIfNeeded: next())
            }
            attempt(candidate)
            await Task.yield()
        }
        // Garbage ending in an end-of-central-directory record with random fields: the parser
        // follows whatever offsets and counts it claims.
        for _ in 0..<300 {
            let body = (0..<(next() % 400)).map { _ in UInt8(truncatingIfNeeded: next()) }
            let fields = (0..<18).map { _ in UInt8(truncatingIfNeeded: next()) }
            attempt(body + [0x50, 0x4B, 0x05, 0x06] + fields)
            await Task.yield()
        }
        // Damage is noticed by more than one check (the ZIP structure and CRC, the manifest, the files).
        #expect(outcomes.count > 2)
    }
}
