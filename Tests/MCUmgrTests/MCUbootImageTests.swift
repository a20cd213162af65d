// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation
import MCUmgr
import Testing

/// The fixtures were made by imgtool 2.5.0 (Tests/Fixtures/mcuboot/README.md). The hashes below
/// are what `imgtool dumpinfo` printed for the SHA-256 TLV and what `sha256sum` printed for the
/// whole file: computed independently of the code under test.
@Suite("MCUboot image files", .timeLimit(.minutes(5)))
struct MCUbootImageTests {
    static func fixture(_ name: String) throws -> [UInt8] {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/mcuboot/\(name)")
        return Array(try Data(contentsOf: url))
    }

    static let tlvHash = "bf9904d9d8affcfe08913f364d72cbaa207c495ad3afee7405f9beb32e801d74"
    static let protectedTLVHash = "d17d79488dd0ea9ce5b30ca2afba4c5d5bf26a6f37d5cf4398bc3e44208b6052"

    @Test("an image with the SHA-256 TLV only")
    func unsigned() throws {
        let image = try MCUbootImage(bytes: try Self.fixture("unsigned.bin"))
        #expect(image.version == MCUbootVersion(major: 0, minor: 8, revision: 8, build: 0))
        #expect(image.version.normalized == "0.8.8")
        #expect(image.headerSize == 0x200)
        #expect(image.imageSize == 3000)
        #expect(image.protectedTLVSize == 0)
        #expect(hexString(image.tlvHash) == Self.tlvHash)
        #expect(hexString(image.fileSHA256) == "12ce39cf6a5054289589d5b709225fe7f67badb0f1ea153c2690175bcebb0d10")
        #expect(image.tlvs.map(\.type) == [0x10])
        #expect(image.bytes.count == 3552)
    }

    @Test("a signed image: key hash and signature TLVs are skipped, the hash is the same image's")
    func signed() throws {
        let image = try MCUbootImage(bytes: try Self.fixture("signed.bin"))
        #expect(image.version.normalized == "0.8.8")
        #expect(hexString(image.tlvHash) == Self.tlvHash)
        #expect(hexString(image.fileSHA256) == "94d2f0074596070cbf6c660a1109a9691d1b28f0ebe29853659cc7cde6917653")
        #expect(image.tlvs.map(\.type) == [0x10, 0x01, 0x22])
    }

    @Test("protected TLVs are read and covered by the hash; a build number shows as +build")
    func protectedTLVs() throws {
        let image = try MCUbootImage(bytes: try Self.fixture("protected.bin"))
        #expect(image.version.normalized == "1.2.3+4")
        #expect(image.protectedTLVSize == 12)
        #expect(hexString(image.tlvHash) == Self.protectedTLVHash)
        #expect(hexString(image.fileSHA256) == "cec2a94d3e52847a60dbe4ab14c4f6a22663d46595ff4a4c407f1eb001c78b04")
        #expect(image.tlvs.map { [Int($0.type), $0.isProtected ? 1 : 0] } == [[0x50, 1], [0x10, 0], [0x01, 0], [0x22, 0]])
        let counter = try #require(image.tlvs.first)
        #expect(Array(image.bytes[counter.value]) == [7, 0, 0, 0])
    }

    @Test("a changed byte anywhere the hash covers is a SHA-256 mismatch")
    func flippedByte() throws {
        for offset in [0x30, 0x200, 0x900, 0xdb7] {
            var bytes = try Self.fixture("signed.bin")
            bytes[offset] ^= 0x01
            #expect(throws: MCUbootImageError.sha256Mismatch, "offset \(offset)") { try MCUbootImage(bytes: bytes) }
        }
        var protected = try Self.fixture("protected.bin")
        protected[0xdb8 + 8] ^= 0x01  // the security counter's value
        #expect(throws: MCUbootImageError.sha256Mismatch) { try MCUbootImage(bytes: protected) }
    }

    @Test("cut files get typed errors")
    func truncated() throws {
        let bytes = try Self.fixture("signed.bin")
        #expect(throws: MCUbootImageError.tooShort(10)) { try MCUbootImage(bytes: Array(bytes.prefix(10))) }
        #expect(throws: MCUbootImageError.pastEnd(needed: 0xdb8, size: 1000)) { try MCUbootImage(bytes: Array(bytes.prefix(1000))) }
        #expect(throws: MCUbootImageError.malformedTLVs("the TLV area is missing")) { try MCUbootImage(bytes: Array(bytes.prefix(0xdb8))) }
        #expect(throws: MCUbootImageError.malformedTLVs("the TLV area's length 152 does not fit the file")) {
            try MCUbootImage(bytes: Array(bytes.prefix(bytes.count - 1)))
        }
    }

    @Test("a bad magic, a header under 32 bytes, a file over the limit, a missing or bad TLV are refused")
    func refusals() throws {
        let good = try Self.fixture("signed.bin")
        var bytes = good
        bytes[0] = 0x3c
        #expect(throws: MCUbootImageError.badMagic(0x96f3_b83c)) { try MCUbootImage(bytes: bytes) }
        #expect(throws: MCUbootImageError.badMagic(0x0403_4b50)) { try MCUbootImage(bytes: [0x50, 0x4b, 3, 4] + good.dropFirst(4)) }

        bytes = good
        bytes[8] = 16
        bytes[9] = 0
        #expect(throws: MCUbootImageError.headerTooSmall(16)) { try MCUbootImage(bytes: bytes) }

        #expect(throws: MCUbootImageError.tooLarge(size: 3664, limit: 3000)) { try MCUbootImage(bytes: good, maxFileBytes: 3000) }
        #expect(throws: MCUbootImageError.tooLarge(size: MCUbootImage.maxFileBytes + 1, limit: MCUbootImage.maxFileBytes)) {
            try MCUbootImage(bytes: [UInt8](repeating: 0, count: MCUbootImage.maxFileBytes + 1))
        }

        bytes = good
        bytes[0xdb8 + 4] = 0x11  // the SHA-256 entry's type, now SHA-384's
        #expect(throws: MCUbootImageError.missingSHA256) { try MCUbootImage(bytes: bytes) }

        bytes = good
        bytes[0xdb8 + 6] = 0x21  // the SHA-256 entry's length, 33
        #expect(throws: MCUbootImageError.self) { try MCUbootImage(bytes: bytes) }

        bytes = good
        bytes[0xdb8] = 0x08  // 0x6908: protected TLVs the header does not declare
        #expect(throws: MCUbootImageError.malformedTLVs("the TLV area has magic 0x6908")) { try MCUbootImage(bytes: bytes) }

        bytes = good
        bytes[0xdb8 + 2] = 0x99  // the area says one byte longer than the file
        #expect(throws: MCUbootImageError.malformedTLVs("the TLV area's length 153 does not fit the file")) { try MCUbootImage(bytes: bytes) }

        var protected = try Self.fixture("protected.bin")
        protected[10] = 16  // protect_tlv_size no longer the protected area's own length
        #expect(throws: MCUbootImageError.self) { try MCUbootImage(bytes: protected) }
    }
}
