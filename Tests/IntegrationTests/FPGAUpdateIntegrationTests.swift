// SPDX-License-Identifier: GPL-2.0-or-later
@testable import Bluetooth
import DBusKit
import Foundation
import LinkKit
import Logging
import Monocle
import Testing

/// The FPGA image update (Monocle.FPGAUpdate) over BlueZ against the virtual Monocle's SPI flash
/// (Tests/World/vmonocle/update.py): a full-size 444,430-byte image written, read back, marked
/// done, and after the reset the FPGA reports the image's version.
@Suite(
    "FPGA update on the virtual Monocle", .timeLimit(.minutes(10)), .serialized,
    .enabled(if: BLEWorld.available || ProcessInfo.processInfo.environment["GLASSD_REQUIRE_BLE"] != nil))
struct FPGAUpdateIntegrationTests {
    private static let monocle = 2

    /// A full-size image carrying `version` where the virtual Monocle looks for it.
    static func image(version: String) -> [UInt8] {
        var bytes = Array("GLASSD-FPGA-VERSION:\(version)".utf8)
        bytes.reserveCapacity(FPGACommands.doneOffset)
        while bytes.count < FPGACommands.doneOffset { bytes.append(UInt8(truncatingIfNeeded: bytes.count &* 131 &+ bytes.count >> 9)) }
        return bytes
    }

    @Test("windowed on the data channel, or over the REPL alone: the image is verified, marked done, and boots", arguments: [true, false])
    func update(windowed: Bool) async throws {
        try await BLEWorld.with { ble in
            try await ble.withMonocle(Self.monocle, txPower: -45) { _ in
                try await ble.withLinkLibrary(pairedWith: Self.monocle) { _, events, link in
                    let vm = VirtualMonocle(bus: try await ble.world.connect(), index: Self.monocle)
                    let serial = try #require(link.channel(MonocleChannel.serial))
                    let data = try #require(link.channel(MonocleChannel.data))
                    let repl = RawRepl(channel: serial, clock: ContinuousClock())
                    try await repl.enter()
                    #expect(try await FPGAUpdate.version(repl: repl) == "v23.230.0808")

                    let version = windowed ? "v99.000.0002" : "v99.000.0003"
                    let image = Self.image(version: version)
                    let report =
                        windowed
                        ? try await FPGAUpdate.runWindowed(image: image, repl: repl, data: data, clock: ContinuousClock())
                        : try await FPGAUpdate.run(image: image, repl: repl)
                    #expect(report.imageBytes == image.count)
                    let stats = try await vm.stats()
                    #expect(stats["fpga_erases"] == 1)
                    #expect(stats["fpga_bytes_written"] == Int64(image.count + 4))

                    // The reset drops the link; the glasses come back with the new FPGA image.
                    let again = try await events.nextLink()
                    let repl2 = RawRepl(channel: try #require(again.channel(MonocleChannel.serial)), clock: ContinuousClock())
                    try await repl2.enter()
                    #expect(try await FPGAUpdate.version(repl: repl2) == version)
                    #expect(try await vm.stats()["resets"] == 1)
                    await vm.bus.close()
                }
            }
        }
    }
}
