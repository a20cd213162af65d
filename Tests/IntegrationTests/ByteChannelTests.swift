// SPDX-License-Identifier: GPL-2.0-or-later
@testable import Bluetooth
import DBusKit
import Foundation
import LinkKit
import Logging
import Monocle
import Synchronization
import Testing

@Suite(
    "Byte channels over BlueZ", .timeLimit(.minutes(3)),
    .enabled(if: BLEWorld.available || ProcessInfo.processInfo.environment["GLASSD_REQUIRE_BLE"] != nil))
struct ByteChannelTests {
    @Test(
        "the link carries bytes both ways, in order, in writes of at most MTU − 3",
        arguments: [true, false])
    func echo(acquireSockets: Bool) async throws {
        try await BLEWorld.with { ble in
            try await ble.withMonocle(2, txPower: -45, echo: true) { _ in
                let bus = try await BusConnection.open(.address(ble.world.busAddress))
                let client = BlueZClient(bus: bus, logger: Logger(label: "test"))
                let supervisor = LinkSupervisor(
                    client: client, store: MemoryDeviceStore(), settings: LinkSettings(adapter: "hci0", scanTimeout: .seconds(5), acquireSockets: acquireSockets, kinds: [.monocle]),
                    logger: Logger(label: "test"))
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { try await client.run() }
                    group.addTask { await supervisor.run() }
                    try await client.state.wait { $0.present }
                    let events = await supervisor.events()
                    _ = try await supervisor.pair(BLEWorld.adapterAddress(2))
                    var link: (any GlassesLink)?
                    var firstGeneration: UInt64?
                    for await event in events {
                        if case .up(let up, let generation) = event {
                            firstGeneration = generation
                            link = up
                            break
                        }
                    }
                    #expect(firstGeneration == 1)
                    let channel = try #require(link?.channel(MonocleChannel.serial))
                    #expect(channel.maxPacketSize == 253)
                    #expect(channel.framing == .stream)
                    // BlueZ shows whether the sockets were taken.
                    let device = "/org/bluez/hci0/dev_" + BLEWorld.adapterAddress(2).replacingOccurrences(of: ":", with: "_")
                    let characteristics = client.state.snapshot.objects.filter { $0.key.hasPrefix(device + "/") }
                        .compactMap { $0.value["org.bluez.GattCharacteristic1"] }
                    func flag(_ uuid: String, _ name: String) -> Bool? {
                        characteristics.first { $0["UUID"]?.string == uuid }?[name]?.bool
                    }
                    try await client.state.wait { snapshot in
                        snapshot.objects.contains { path, interfaces in
                            path.hasPrefix(device + "/") && interfaces["org.bluez.GattCharacteristic1"]?["UUID"]?.string == MonocleUUID.serialRX
                                && interfaces["org.bluez.GattCharacteristic1"]?["WriteAcquired"]?.bool == acquireSockets
                        }
                    }
                    #expect(flag(MonocleUUID.serialRX, "WriteAcquired") != nil)
                    #expect(client.state.snapshot.objects.contains { path, interfaces in
                        path.hasPrefix(device + "/") && interfaces["org.bluez.GattCharacteristic1"]?["UUID"]?.string == MonocleUUID.serialTX
                            && interfaces["org.bluez.GattCharacteristic1"]?["NotifyAcquired"]?.bool == acquireSockets
                    })
                    let sent = (0..<1000).map { UInt8(truncatingIfNeeded: $0 * 7) }
                    var received: [UInt8] = []
                    async let echoed: [UInt8] = {
                        var bytes: [UInt8] = []
                        for await piece in channel.incoming {
                            guard case .packet(let packet) = piece else { return [] }
                            bytes += packet
                            if bytes.count >= sent.count { break }
                        }
                        return bytes
                    }()
                    try await channel.write(sent)
                    received = await echoed
                    #expect(received == sent)
                    // The data channel is separate; its echo means the Monocle has recorded the write.
                    let data = try #require(link?.channel(MonocleChannel.data))
                    #expect(data.framing == .packets)
                    // A message longer than one packet is refused, not split.
                    await #expect(throws: ChannelError.tooLong(size: 254, limit: 253)) {
                        try await data.write(Array(repeating: 0x41, count: 254))
                    }
                    try await data.write(Array("data".utf8))
                    var dataEcho: [UInt8]?
                    for await piece in data.incoming {
                        if case .packet(let packet) = piece { dataEcho = packet }
                        break
                    }
                    #expect(dataEcho == Array("data".utf8))

                    let records = try String(contentsOfFile: ble.recordFile(2), encoding: .utf8)
                        .split(separator: "\n").compactMap {
                            try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
                        }
                    let serialWrites = records.filter { $0["service"] as? String == "serial" }.compactMap { $0["hex"] as? String }
                    #expect(serialWrites.map { $0.count / 2 } == [253, 253, 253, 241])
                    #expect(records.last?["service"] as? String == "data")
                    #expect(records.allSatisfy { $0["type"] as? String == "command" })

                    // Suspended (as for a firmware update): the link goes down but stays connected in BlueZ;
                    // resumed: a new link, the next generation.
                    await supervisor.suspend()
                    var down: (generation: UInt64, reason: String)?
                    for await event in events {
                        if case .down(let generation, let reason) = event {
                            down = (generation, reason)
                            break
                        }
                    }
                    #expect(down?.generation == 1)
                    #expect(down?.reason == "released")
                    #expect(client.state.snapshot.isConnected(device))
                    await supervisor.resume()
                    var upAgain: UInt64?
                    for await event in events {
                        if case .up(_, let generation) = event {
                            upAgain = generation
                            break
                        }
                    }
                    #expect(upAgain == 2)
                    group.cancelAll()
                }
                await bus.close()
            }
        }
    }
}
