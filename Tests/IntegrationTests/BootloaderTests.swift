// SPDX-License-Identifier: GPL-2.0-or-later
import AssistantEngine
@testable import Bluetooth
import Concurrency
import DBusKit
import Firmware
import Glasses
import Foundation
import LinkKit
import Logging
import Monocle
import Synchronization
import Testing

/// The firmware client (Firmware.SecureDFU) over BlueZ against the virtual Monocle's bootloader
/// (Tests/World/vdfu.py): found at the glasses' address + 1, the DFU profile's channels (control
/// point written with response, packet without), a drop in the middle resumed, the new image booted.
@Suite(
    "Firmware transfer to the virtual bootloader", .timeLimit(.minutes(5)),
    .enabled(if: BLEWorld.available || ProcessInfo.processInfo.environment["GLASSD_REQUIRE_BLE"] != nil))
struct BootloaderTests {
    private static let monocle = 2

    @Test("the bootloader at address + 1 takes the image over the DFU profile; a drop mid-image is resumed; the new image boots")
    func transferWithDrop() async throws {
        try await BLEWorld.with { ble in
            try await ble.withMonocle(Self.monocle, txPower: -45) { _ in
                try await ble.withLinkLibrary(pairedWith: Self.monocle) { supervisor, events, _ in
                    let vm = VirtualMonocle(bus: try await ble.world.connect(), index: Self.monocle)
                    await supervisor.suspend()
                    try await vm.call("EnterDFU")
                    // A signed package from nrfutil, its image carrying its version for the bootloader.
                    // Large enough that the rest of the image takes far longer than the drop's call.
                    let made = try await DFUPackages.make(size: 60_000, version: "v99.000.0001", in: ble.world.directory)
                    let package = try DFUPackage(path: made.path)
                    let (image, initPacket) = (package.image, package.initPacket)
                    let bootloader = BLEWorld.adapterAddress(Self.monocle + 1)
                    #expect(BluetoothAddress(BLEWorld.adapterAddress(Self.monocle)).flatMap(GlassesKind.monocle.bootloaderAddress)?.description == bootloader)

                    // First try: the link drops once 9 KB of the image are in (a call on a bus
                    // connection already open, not a busctl started then: it must come first).
                    let halfway = OneShotEvent()
                    let control = try await ble.world.connect()
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        group.addTask {
                            await halfway.wait()
                            guard !Task.isCancelled else { return }
                            _ = try await control.call(
                                "org.bluez", path: "/org/bluezoo", interface: "org.bluezoo.Test1", member: "DropLink", [.string(bootloader)])
                        }
                        await #expect(throws: DFUError.linkLost) {
                            try await supervisor.withBootloader(timeout: .seconds(30), connectWindow: .seconds(60)) { link in
                                let dfu = SecureDFU(
                                    control: try #require(link.channel(DFUChannel.control)),
                                    packet: try #require(link.channel(DFUChannel.packet)), clock: ContinuousClock())
                                try await dfu.update(initPacket: initPacket, image: image) { progress in
                                    if progress.bytesDone > 9000 { halfway.fire() }
                                }
                            }
                        }
                        #expect(halfway.hasFired)
                        group.cancelAll()
                        try await group.waitForAll()  // the drop itself went through
                    }
                    #expect(try await vm.call("Mode") == [.string("dfu")])

                    // Second try: resumed from what the bootloader reports; less than the whole image is sent.
                    let sent = try await supervisor.withBootloader(timeout: .seconds(30), connectWindow: .seconds(60)) { link in
                        let dfu = SecureDFU(
                            control: try #require(link.channel(DFUChannel.control)),
                            packet: try #require(link.channel(DFUChannel.packet)), clock: ContinuousClock())
                        try await dfu.update(initPacket: initPacket, image: image)
                        return await dfu.bytesSent
                    }
                    #expect(sent < image.count + initPacket.count, "sent \(sent) of \(image.count)")

                    // The new image boots: the glasses come back as themselves.
                    await supervisor.resume()
                    _ = try await events.nextLink()
                    #expect(try await vm.call("Mode") == [.string("app")])
                    #expect(try await vm.stats()["dfu_boots"] == 1)
                    await control.close()
                    await vm.bus.close()
                }
            }
        }
    }
}
