// SPDX-License-Identifier: GPL-2.0-or-later
import Firmware
import Foundation
import Testing

/// Packages made by a real packager (nrfutil, Tests/World/make_dfu_package.py) against
/// Firmware.DFUPackage: a good one reads back as made, damaged ones are refused before anything
/// would be sent to the glasses.
@Suite(
    "DFU packages made by nrfutil", .timeLimit(.minutes(2)),
    .enabled(if: BLEWorld.available || ProcessInfo.processInfo.environment["GLASSD_REQUIRE_BLE"] != nil))
struct DFUPackageToolTests {
    private static let marker = Array("GLASSD-FW-VERSION:v99.000.0001".utf8)

    private static func withDirectory<R>(_ body: (String) async throws -> R) async throws -> R {
        let dir = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        return try await body(dir)
    }

    @Test("a package from nrfutil reads as made: signed init packet, the image with its version, the printed SHA-256")
    func goodPackage() async throws {
        try await Self.withDirectory { dir in
            let made = try await DFUPackages.make(size: 20_000, version: "v99.000.0001", in: dir)
            #expect(made.signed == true)
            #expect(made.imageSize == 20_000)
            #expect(made.appSize == 20_000)
            let package = try DFUPackage(path: made.path, pinnedSHA256: made.sha256.uppercased())
            #expect(package.sha256 == made.sha256)
            #expect(package.image.count == made.imageSize)
            #expect(package.initPacket.count == made.initSize)
            #expect(Array(package.image.prefix(Self.marker.count)) == Self.marker)
            // A signed init command is about 141 bytes: well inside the limit.
            #expect((100...DFUPackage.Limits().initPacket).contains(package.initPacket.count))
        }
    }

    @Test("a damaged ZIP is refused")
    func corruptZip() async throws {
        try await Self.withDirectory { dir in
            let good = try await DFUPackages.make(size: 20_000, version: "v99.000.0001", in: dir)
            let bad = try await DFUPackages.broken(.corruptZip, from: good)
            #expect(throws: DFUPackageError.corruptZip) { try DFUPackage(path: bad.path) }
        }
    }

    /// DFUPackage reads the init packet: its app_size must be the image's size, and what is
    /// not a protobuf is refused, before the glasses are touched.
    @Test("a cut image and a garbage init packet are refused", arguments: [DFUPackages.Damage.truncatedImage, .badInit])
    func initPacketDamage(_ damage: DFUPackages.Damage) async throws {
        try await Self.withDirectory { dir in
            let good = try await DFUPackages.make(size: 20_000, version: "v99.000.0001", in: dir)
            let bad = try await DFUPackages.broken(damage, from: good)
            #expect(damage == .badInit ? bad.appSize == nil : bad.appSize != bad.imageSize)
            // Not #expect(throws:) with a closure result: on a pass it would print the whole package.
            do {
                _ = try DFUPackage(path: bad.path)
                Issue.record("DFUPackage accepted a package with \(damage.rawValue)")
            } catch let error as DFUPackageError {
                switch (damage, error) {
                case (.truncatedImage, .imageSizeMismatch(let image, let initPacket)):
                    #expect(image == bad.imageSize && initPacket == good.appSize)
                case (.badInit, .invalidInitPacket): break
                default: Issue.record("\(damage.rawValue) refused as \(error)")
                }
            }
        }
    }
}
