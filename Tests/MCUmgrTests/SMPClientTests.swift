// SPDX-License-Identifier: GPL-2.0-or-later
import LinkKit
import MCUmgr
import Testing
import TestSupport

@Suite("SMP client over a fake device", .timeLimit(.minutes(5)))
struct SMPClientTests {
    static let state = ImageState(slots: [
        SMPFixtures.runningSlot,
        ImageSlot(slot: 1, version: "0.8.9", hash: [UInt8](repeating: 7, count: 32), pending: true),
    ])

    /// Timeout tests move the clock past the answer's deadline only: a write's own bound stays out of reach.
    static var patient: SMPClientOptions {
        var options = SMPClientOptions()
        options.writeTimeout = .seconds(3600)
        return options
    }

    @Test("an answer cut into 3 notifications is joined; the request is the hand-computed frame")
    func joinsNotifications() async throws {
        let device = FakeSMPDevice(maxPacketSize: 20) { FakeSMPDevice.reply(to: $0, Self.state.payload, pieces: 3) }
        let client = SMPClient(channel: device, clock: ManualClock(), firstSequence: 0x42)
        #expect(try await client.imageState() == Self.state)
        #expect(device.writes == [hex(SMPFixtures.stateRead)])
        #expect(Self.state.payload.encoded.count > 3 * 20)  // more than three notifications' worth at this MTU
    }

    @Test("late answers to other requests (older sequence, other group) are skipped, even cut in pieces")
    func skipsStaleAnswers() async throws {
        let device = FakeSMPDevice { request in
            FakeSMPDevice.reply(to: request, .map(["rc": .int(6)]), sequence: request.header.sequence &- 1, pieces: 2)
                + FakeSMPDevice.reply(to: request, .map(["rc": .int(1)]), group: 9)
                + FakeSMPDevice.reply(to: request, Self.state.payload, pieces: 2)
        }
        let client = SMPClient(channel: device, clock: ManualClock(), firstSequence: 0xff)
        #expect(try await client.imageState() == Self.state)
        #expect(try await client.imageState() == Self.state)
        #expect(device.requests.map(\.header.sequence) == [0xff, 0x00])
    }

    @Test("no answer: the request times out at its deadline")
    func timeout() async throws {
        let clock = ManualClock()
        let device = FakeSMPDevice { _ in [] }
        let client = SMPClient(channel: device, clock: clock, options: Self.patient, firstSequence: 1)
        async let answer = #expect(throws: SMPClientError.timeout(group: 1, command: 0)) { try await client.imageState() }
        #expect(await clock.nextDeadline(within: .seconds(600)).offset == .seconds(30))
        clock.advance(by: .seconds(30))
        _ = await answer
    }

    @Test("a request's own timeout (the first chunk's 90 s) replaces the default 30 s")
    func ownTimeout() async throws {
        let clock = ManualClock()
        let device = FakeSMPDevice { _ in [] }
        let client = SMPClient(channel: device, clock: clock, options: Self.patient, firstSequence: 5)
        let upload = ImageUpload(length: 10, fileSHA256: [UInt8](repeating: 1, count: 32))
        async let answer = client.upload(upload, offset: 0, data: [0, 1, 2, 3][...], timeout: ImageUploadTimeouts.firstChunk)
        // The client waits for the answer (the write's own bound is an hour away).
        #expect(await clock.nextDeadline(within: .seconds(600)).offset == .seconds(90))
        clock.advance(by: .seconds(89))
        let request = SMPFrame(header: SMPHeader(operation: .write, length: 0, group: 1, sequence: 5, command: 1), payload: .map([]))
        for piece in FakeSMPDevice.reply(to: request, .map(["rc": .int(0), "off": .int(4)])) { device.incoming.push(piece) }
        #expect(try await answer == ImageUploadAnswer(offset: 4))
    }

    @Test("a version 1 rc becomes an SMPError; MGMT_ERR_ENOTSUP to the parameters is 'not supported'")
    func legacyErrors() async throws {
        let device = FakeSMPDevice { request in
            FakeSMPDevice.reply(to: request, .map(["rc": .int(request.header.group == SMPGroup.os ? 8 : 6)]))
        }
        let client = SMPClient(channel: device, clock: ManualClock())
        await #expect(throws: SMPError(group: 1, rc: 6, isGroupCode: false)) { try await client.imageState() }
        #expect(try await client.mcumgrParameters() == .notSupported)
    }

    @Test("a version 2 err becomes an SMPError with the group's code")
    func groupErrors() async throws {
        let device = FakeSMPDevice { FakeSMPDevice.reply(to: $0, .map(["err": .map(["group": .int(1), "rc": .int(9)])])) }
        let client = SMPClient(channel: device, clock: ManualClock())
        let upload = ImageUpload(length: 10, fileSHA256: [UInt8](repeating: 1, count: 32))
        let error = await #expect(throws: SMPError.self) { try await client.upload(upload, offset: 0, data: [1][...]) }
        #expect(error == SMPError(group: 1, rc: 9, isGroupCode: true))
        #expect(error?.message == "no free slot")
    }

    @Test("a request longer than a packet goes out in packet-sized writes, or is refused when the device cannot join them")
    func splitsRequests() async throws {
        let device = FakeSMPDevice(maxPacketSize: 20) { FakeSMPDevice.reply(to: $0, .map(["off": .int(100)])) }
        let upload = ImageUpload(length: 100, fileSHA256: [UInt8](repeating: 1, count: 32))
        let data = [UInt8](repeating: 0x5a, count: 100)
        let client = SMPClient(channel: device, clock: ManualClock(), firstSequence: 3)
        #expect(try await client.upload(upload, offset: 0, data: data[...]) == ImageUploadAnswer(offset: 100))
        let frame = try SMPFrame(
            header: SMPHeader(operation: .write, length: 0, group: 1, sequence: 3, command: 1),
            payload: upload.payload(offset: 0, data: data)
        ).encoded()
        #expect(device.writes.allSatisfy { $0.count <= 20 })
        #expect(device.writes.count == (frame.count + 19) / 20)
        #expect(device.writes.flatMap { $0 } == frame)

        var options = SMPClientOptions()
        options.deviceReassembles = false
        let strict = FakeSMPDevice(maxPacketSize: 20) { _ in [] }
        let refusing = SMPClient(channel: strict, clock: ManualClock(), options: options, firstSequence: 3)
        #expect(refusing.maxRequestSize == 20)
        await #expect(throws: SMPClientError.requestTooLong(size: frame.count, limit: 20)) {
            try await refusing.upload(upload, offset: 0, data: data[...])
        }
        #expect(strict.writes.isEmpty)
    }

    @Test("the link ending, or notifications lost, fail the request at once")
    func linkFailures() async throws {
        let gone = FakeSMPDevice { _ in [] }
        gone.incoming.finish()
        await #expect(throws: SMPClientError.linkLost) { try await SMPClient(channel: gone, clock: ManualClock()).imageState() }

        let flooded = FakeSMPDevice(inboxCapacity: 1) { FakeSMPDevice.reply(to: $0, Self.state.payload, pieces: 3) }
        await #expect(throws: SMPClientError.lostNotifications) { try await SMPClient(channel: flooded, clock: ManualClock()).imageState() }
    }

    @Test("OS commands: echo, reset, parameters")
    func osCommands() async throws {
        let device = FakeSMPDevice { request in
            switch request.header.command {
            case 0: FakeSMPDevice.reply(to: request, .map(["r": request.payload["d"] ?? .null]))
            case 6: FakeSMPDevice.reply(to: request, .map(["buf_size": .int(517), "buf_count": .int(4)]))
            default: FakeSMPDevice.reply(to: request, .map([]))
            }
        }
        let client = SMPClient(channel: device, clock: ManualClock())
        #expect(try await client.echo("hello") == "hello")
        try await client.reset()
        #expect(try await client.mcumgrParameters() == .reported(bufferSize: 517, bufferCount: 4))
        #expect(device.requests.map { [$0.header.operation.rawValue, UInt8($0.header.group), $0.header.command] } == [[2, 0, 0], [2, 0, 5], [0, 0, 6]])
        #expect(device.requests[1].payload == .map([]))
    }

    @Test("image state write sends the hash and confirm; erase names its slot")
    func imageWrites() async throws {
        let device = FakeSMPDevice { request in
            FakeSMPDevice.reply(to: request, request.header.command == 0 ? Self.state.payload : .map([]))
        }
        let client = SMPClient(channel: device, clock: ManualClock())
        let hash = [UInt8](repeating: 7, count: 32)
        #expect(try await client.setImageState(hash: hash, confirm: false) == Self.state)
        _ = try await client.setImageState(hash: nil, confirm: true)
        try await client.eraseImage(slot: 1)
        #expect(device.requests.map(\.payload) == [
            .map(["hash": .bytes(hash), "confirm": .bool(false)]), .map(["confirm": .bool(true)]), .map(["slot": .int(1)]),
        ])
        #expect(device.requests.allSatisfy { $0.header.operation == .write && $0.header.group == 1 })
    }
}
