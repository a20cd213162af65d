// SPDX-License-Identifier: GPL-2.0-or-later
import Firmware
import Testing

/// Byte fixtures from the Nordic Secure DFU control-point spec (nRF5 SDK 17.1, "DFU transport: BLE").
@Suite("DFU control-point codec", .timeLimit(.minutes(5)))
struct DFUControlTests {
    @Test("Requests encode little-endian, as the spec lays them out")
    func requests() {
        #expect(DFURequest.create(.command, size: 141).encoded == [0x01, 0x01, 0x8D, 0x00, 0x00, 0x00])
        #expect(DFURequest.create(.data, size: 0x1000).encoded == [0x01, 0x02, 0x00, 0x10, 0x00, 0x00])
        #expect(DFURequest.setPRN(12).encoded == [0x02, 0x0C, 0x00])
        #expect(DFURequest.setPRN(0x0102).encoded == [0x02, 0x02, 0x01])
        #expect(DFURequest.calculateChecksum.encoded == [0x03])
        #expect(DFURequest.execute.encoded == [0x04])
        #expect(DFURequest.select(.command).encoded == [0x06, 0x01])
        #expect(DFURequest.select(.data).encoded == [0x06, 0x02])
        #expect(DFURequest.abort.encoded == [0x0C])
    }

    @Test("Requests decode back, and malformed ones do not")
    func requestRoundTrip() {
        let all: [DFURequest] = [
            .create(.command, size: 141), .create(.data, size: 4096), .setPRN(12), .calculateChecksum, .execute,
            .select(.command), .select(.data), .abort,
        ]
        for request in all { #expect(DFURequest.decode(request.encoded) == request) }
        #expect(DFURequest.decode([]) == nil)
        #expect(DFURequest.decode([0x01, 0x03, 0, 0, 0, 0]) == nil)
        #expect(DFURequest.decode([0x06, 0x01, 0x00]) == nil)
        #expect(DFURequest.decode([0x05]) == nil)
    }

    @Test("Select: maxSize, offset and CRC")
    func select() throws {
        let bytes: [UInt8] = [0x60, 0x06, 0x01, 0x00, 0x10, 0x00, 0x00, 0x34, 0x12, 0x00, 0x00, 0xEF, 0xBE, 0xAD, 0xDE]
        #expect(try DFUResponse.decode(bytes) == .selected(maxSize: 4096, offset: 0x1234, crc: 0xDEAD_BEEF))
        #expect(DFUResponse.selected(maxSize: 4096, offset: 0x1234, crc: 0xDEAD_BEEF).encoded == bytes)
    }

    @Test("Checksum and packet receipt notification: offset and CRC")
    func checksum() throws {
        let bytes: [UInt8] = [0x60, 0x03, 0x01, 0x8D, 0x00, 0x00, 0x00, 0x78, 0x56, 0x34, 0x12]
        #expect(try DFUResponse.decode(bytes) == .checksum(offset: 141, crc: 0x1234_5678))
    }

    @Test("Plain successes and failures")
    func results() throws {
        #expect(try DFUResponse.decode([0x60, 0x04, 0x01]) == .done(.execute))
        #expect(try DFUResponse.decode([0x60, 0x02, 0x01]) == .done(.setPRN))
        #expect(try DFUResponse.decode([0x60, 0x04, 0x08]) == .failed(.execute, .operationNotPermitted, nil))
        #expect(try DFUResponse.decode([0x60, 0x01, 0x04]) == .failed(.create, .insufficientResources, nil))
        #expect(try DFUResponse.decode([0x60, 0x01, 0x99]) == .failed(.create, .unknown(0x99), nil))
    }

    @Test(
        "Extended errors are named",
        arguments: [
            (0x02, DFUExtendedError.wrongCommandFormat), (0x03, .unknownCommand), (0x04, .initCommandInvalid),
            (0x05, .firmwareVersionFailure), (0x06, .hardwareVersionFailure), (0x07, .softDeviceVersionFailure),
            (0x08, .signatureMissing), (0x09, .wrongHashType), (0x0A, .hashFailed), (0x0B, .wrongSignatureType),
            (0x0C, .verificationFailed), (0x0D, .insufficientSpace), (0x42, .unknown(0x42)),
        ] as [(UInt8, DFUExtendedError)])
    func extended(byte: UInt8, error: DFUExtendedError) throws {
        let bytes: [UInt8] = [0x60, 0x04, 0x0B, byte]
        #expect(try DFUResponse.decode(bytes) == .failed(.execute, .extendedError, error))
        #expect(DFUResponse.failed(.execute, .extendedError, error).encoded == bytes)
    }

    @Test("Short, foreign or odd-length responses are typed errors")
    func malformed() {
        #expect(throws: DFUResponseError.tooShort([0x60, 0x04])) { try DFUResponse.decode([0x60, 0x04]) }
        #expect(throws: DFUResponseError.notAResponse([0x10, 0x04, 0x01])) {
            try DFUResponse.decode([0x10, 0x04, 0x01])
        }
        #expect(throws: DFUResponseError.unknownOpcode(0x05)) { try DFUResponse.decode([0x60, 0x05, 0x01]) }
        #expect(throws: DFUResponseError.wrongLength(.select, expected: 15, got: 14)) {
            try DFUResponse.decode([0x60, 0x06, 0x01] + [UInt8](repeating: 0, count: 11))
        }
        #expect(throws: DFUResponseError.wrongLength(.calculateChecksum, expected: 11, got: 3)) {
            try DFUResponse.decode([0x60, 0x03, 0x01])
        }
        #expect(throws: DFUResponseError.wrongLength(.execute, expected: 3, got: 4)) {
            try DFUResponse.decode([0x60, 0x04, 0x01, 0x00])
        }
        #expect(throws: DFUResponseError.wrongLength(.execute, expected: 4, got: 3)) {
            try DFUResponse.decode([0x60, 0x04, 0x0B])
        }
    }

    @Test("10,000 random responses never crash the parser")
    func fuzz() {
        var x: UInt64 = 0x1234_5678
        func next() -> UInt8 {
            x = x &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: x >> 33)
        }
        var parsed = 0
        for i in 0..<10_000 {
            var bytes = (0..<Int(next() % 17)).map { _ in next() }
            if i % 2 == 0, bytes.count >= 3 {
                bytes[0] = 0x60
                bytes[1] = [0x01, 0x02, 0x03, 0x04, 0x06, 0x0C][Int(next()) % 6]
                bytes[2] = next() % 12
            }
            if (try? DFUResponse.decode(bytes)) != nil { parsed += 1 }
        }
        #expect(parsed > 0)
    }

    @Test("CRC-32 is zlib's, and running updates equal one pass")
    func crc() {
        #expect(ZlibCRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926)
        #expect(ZlibCRC32.checksum([]) == 0)
        let bytes = (0..<10_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        var running = ZlibCRC32()
        running.update(bytes[..<3333])
        running.update(bytes[3333...])
        #expect(running.value == ZlibCRC32.checksum(bytes))
    }
}
