// SPDX-License-Identifier: GPL-2.0-or-later
import Firmware
import Synchronization
import LinkKit
import Testing
import TestSupport

@Suite("Secure DFU transfer against a fake bootloader", .timeLimit(.minutes(5)))
struct SecureDFUTests {
    /// Deterministic bytes, so a failure repeats.
    static func bytes(_ count: Int, seed: UInt32) -> [UInt8] {
        var x = seed | 1
        return (0..<count).map { _ in
            x ^= x << 13
            x ^= x >> 17
            x ^= x << 5
            return UInt8(truncatingIfNeeded: x)
        }
    }

    static let initPacket = bytes(141, seed: 7)
    /// Three whole objects and a partial one.
    static let image = bytes(3 * 4096 + 1000, seed: 11)

    static func settings(timeout: Duration = .seconds(5), prn: UInt16 = 12) -> DFUSettings {
        var settings = DFUSettings()
        settings.responseTimeout = timeout
        settings.finalExecuteTimeout = timeout
        settings.writeTimeout = timeout
        settings.packetReceiptInterval = prn
        return settings
    }

    static func client(
        _ bootloader: FakeBootloader, settings: DFUSettings = settings()
    ) -> SecureDFU<ContinuousClock> {
        let (control, packet) = bootloader.connect()
        return SecureDFU(control: control, packet: packet, clock: ContinuousClock(), settings: settings)
    }

    @Test("A full transfer leaves exactly the image in flash, each byte sent once")
    func fullTransfer() async throws {
        let bootloader = FakeBootloader()
        let dfu = Self.client(bootloader)
        let seen = Mutex<[DFUProgress]>([])
        try await dfu.update(initPacket: Self.initPacket, image: Self.image) { p in seen.withLock { $0.append(p) } }
        #expect(bootloader.with { $0.flash } == Self.image)
        #expect(bootloader.with { $0.commandExecuted })
        #expect(bootloader.with { $0.packetBytes } == Self.initPacket.count + Self.image.count)
        let progress = seen.withLock { $0 }
        #expect(
            progress.last
                == DFUProgress(
                    phase: .image(object: 3), bytesDone: Self.image.count, totalBytes: Self.image.count,
                    atBoundary: true))
        #expect(progress.map(\.bytesDone) == progress.map(\.bytesDone).sorted())
        #expect(progress.contains { !$0.atBoundary })
        // Set PRN first, then the init packet is executed before any data object is created.
        let requests = bootloader.with { $0.requests }
        #expect(requests.first == .setPRN(12))
        let initExecuted = try #require(requests.firstIndex(of: .execute))
        let firstData = try #require(requests.firstIndex(of: .create(.data, size: 4096)))
        #expect(initExecuted < firstData)
    }

    @Test("Without packet receipt notifications, only the checksum checks an object", arguments: [0, 1, 5] as [UInt16])
    func prnSettings(prn: UInt16) async throws {
        let bootloader = FakeBootloader(maxPacketSize: 100)
        try await Self.client(bootloader, settings: Self.settings(prn: prn)).update(
            initPacket: Self.initPacket, image: Self.image)
        #expect(bootloader.with { $0.flash } == Self.image)
    }

    enum DropPoint: String, CaseIterable, Sendable {
        case midInit, afterInitExecute, midObject, atObjectEnd, afterExecute, midLastObject
    }

    @Test(
        "A dropped link, then a new client: it resumes from Select and ends with the exact image",
        arguments: DropPoint.allCases)
    func resume(at point: DropPoint) async throws {
        let bootloader = FakeBootloader()
        let rule: @Sendable (FakeBootloader.State) -> Bool =
            switch point {
            case .midInit: { $0.command.count >= 100 }
            case .afterInitExecute: { $0.commandExecuted }
            case .midObject: { $0.data.count >= 4096 + 1500 }
            case .atObjectEnd: { $0.data.count == 2 * 4096 && $0.executed == 4096 }
            case .afterExecute: { $0.executed == 2 * 4096 }
            case .midLastObject: { $0.data.count >= 3 * 4096 + 500 }
            }
        bootloader.with { $0.dropWhen = rule }
        let first = Self.client(bootloader)
        await #expect(throws: DFUError.linkLost) {
            try await first.update(initPacket: Self.initPacket, image: Self.image)
        }
        let held = bootloader.with { $0.packetBytes }
        let second = Self.client(bootloader)
        try await second.update(initPacket: Self.initPacket, image: Self.image)
        #expect(bootloader.with { $0.flash } == Self.image)
        let resent = await second.bytesSent
        #expect(resent < Self.initPacket.count + Self.image.count)
        // Nothing the bootloader held and checked was sent again, beyond the init packet.
        #expect(held + resent <= 2 * Self.initPacket.count + Self.image.count + 4096)
        if point == .afterExecute {
            // The second client executed the boundary object again and was told it already was.
            #expect(resent == Self.image.count - 2 * 4096)
        }
    }

    @Test("A corrupted packet is caught by the CRC and its object sent again", arguments: [12, 0] as [UInt16])
    func corruption(prn: UInt16) async throws {
        let bootloader = FakeBootloader()
        bootloader.with { $0.flipDataWrite = 20 }
        let dfu = Self.client(bootloader, settings: Self.settings(prn: prn))
        try await dfu.update(initPacket: Self.initPacket, image: Self.image)
        #expect(bootloader.with { $0.flash } == Self.image)
        #expect(bootloader.with { $0.flipDataWrite } == nil)
        let sent = await dfu.bytesSent
        #expect(sent > Self.initPacket.count + Self.image.count)
        #expect(bootloader.with { $0.requests.filter { $0 == .create(.data, size: 4096) }.count } == 4)
    }

    @Test("A CRC that stays wrong ends in crcMismatch after the set attempts, not a loop")
    func persistentCorruption() async throws {
        let bootloader = FakeBootloader()
        bootloader.with { $0.corruptAfterFirstObject = true }
        await #expect(throws: DFUError.crcMismatch(.image(object: 1), attempts: 4)) {
            try await Self.client(bootloader).update(initPacket: Self.initPacket, image: Self.image)
        }
        #expect(bootloader.with { $0.requests.filter { $0 == .create(.data, size: 4096) }.count } == 1 + 4)
        #expect(bootloader.with { $0.executed } == 4096)
    }

    @Test("A refused init packet surfaces as a typed remote error, and no data is sent")
    func remoteExtendedError() async throws {
        let bootloader = FakeBootloader()
        bootloader.with { $0.failures[.execute] = .failed(.execute, .extendedError, .verificationFailed) }
        await #expect(throws: DFUError.remote(.execute, .extendedError, .verificationFailed)) {
            try await Self.client(bootloader).update(initPacket: Self.initPacket, image: Self.image)
        }
        #expect(bootloader.with { $0.dataWrites } == 0)
        #expect(!bootloader.with { $0.requests }.contains(.select(.data)))
    }

    @Test("A refused Create surfaces as a typed remote error")
    func remoteError() async throws {
        let bootloader = FakeBootloader()
        bootloader.with { $0.failures[.create] = .failed(.create, .insufficientResources, nil) }
        await #expect(throws: DFUError.remote(.create, .insufficientResources, nil)) {
            try await Self.client(bootloader).update(initPacket: Self.initPacket, image: Self.image)
        }
    }

    @Test("The fake refuses a data object before the init packet was executed")
    func fakeRefusesDataFirst() async throws {
        let bootloader = FakeBootloader()
        let (control, packet) = bootloader.connect()
        try await control.write(DFURequest.create(.data, size: 4096).encoded)
        try await packet.write([1, 2, 3])
        guard case .packet(let reply) = await control.incoming.next() else {
            Issue.record("no reply")
            return
        }
        #expect(try DFUResponse.decode(reply) == .failed(.create, .operationNotPermitted, nil))
        #expect(bootloader.with { $0.data }.isEmpty)
    }

    @Test("A silent bootloader times out, naming the phase")
    func timeout() async throws {
        let bootloader = FakeBootloader()
        bootloader.with { $0.silent = true }
        await #expect(throws: DFUError.timeout(.setup)) {
            try await Self.client(bootloader, settings: Self.settings(timeout: .milliseconds(100)))
                .update(initPacket: Self.initPacket, image: Self.image)
        }
    }

    @Test("An init packet larger than the command object is refused before anything is sent")
    func initPacketTooLarge() async throws {
        let bootloader = FakeBootloader()
        await #expect(throws: DFUError.self) {
            try await Self.client(bootloader).update(initPacket: Self.bytes(300, seed: 3), image: Self.image)
        }
        #expect(bootloader.with { $0.packetBytes } == 0)
    }

    @Test("stop() ends the transfer at an object boundary; a new client finishes it")
    func stopAtBoundary() async throws {
        let bootloader = FakeBootloader()
        let dfu = Self.client(bootloader)
        await #expect(throws: DFUError.stopped) {
            try await dfu.update(initPacket: Self.initPacket, image: Self.image) { p in
                if p.bytesDone > 4096 + 1000 { dfu.stop() }
            }
        }
        // Object 1 was finished and executed; object 2 was never created.
        #expect(bootloader.with { ($0.executed, $0.data.count) } == (2 * 4096, 2 * 4096))
        try await Self.client(bootloader).update(initPacket: Self.initPacket, image: Self.image)
        #expect(bootloader.with { $0.flash } == Self.image)
    }

    @Test("A different image on the bootloader makes the client start again from the init packet")
    func foreignProgress() async throws {
        let bootloader = FakeBootloader()
        bootloader.with { $0.dropWhen = { $0.executed == 2 * 4096 } }
        let other = Self.bytes(Self.image.count, seed: 99)
        await #expect(throws: DFUError.linkLost) {
            try await Self.client(bootloader).update(initPacket: Self.initPacket, image: other)
        }
        try await Self.client(bootloader).update(initPacket: Self.initPacket, image: Self.image)
        #expect(bootloader.with { $0.flash } == Self.image)
    }
}
