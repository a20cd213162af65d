// SPDX-License-Identifier: GPL-2.0-or-later
import MCUmgr
import Testing

@Suite("Image and OS command payloads", .timeLimit(.minutes(5)))
struct ImageCommandsTests {
    static let sha = [UInt8](repeating: 0xaa, count: 32)

    @Test("the first upload request carries image, len, off, sha, data (and upgrade when asked); later ones off and data")
    func uploadPayloads() {
        let upload = ImageUpload(length: 100, fileSHA256: Self.sha)
        let first = "a5 65696d616765 00 636c656e 1864 636f6666 00 63736861 5820" + String(repeating: "aa", count: 32)
            + " 6464617461 43010203"
        #expect(hexString(upload.payload(offset: 0, data: [1, 2, 3]).encoded) == hexString(hex(first)))
        var upgrading = upload
        upgrading.upgradeOnly = true
        #expect(hexString(upgrading.payload(offset: 0, data: [1, 2, 3]).encoded) == hexString(hex("a6" + first.dropFirst(2) + "67757067726164 65 f5")))
        #expect(hexString(upload.payload(offset: 4096, data: [9]).encoded) == "a2636f666619100064646174614109")
    }

    @Test("an image file's upload takes its length and whole-file SHA-256 (not the TLV hash)")
    func uploadOfFile() throws {
        let image = try MCUbootImage(bytes: try MCUbootImageTests.fixture("signed.bin"))
        #expect(ImageUpload(image) == ImageUpload(length: 3664, fileSHA256: image.fileSHA256))
        #expect(ImageUpload(image).fileSHA256 != image.tlvHash)
    }

    /// Worked by hand: {off: 4096, data: h''} is a2 636f6666 191000 6464617461 40 (14 bytes); with
    /// the header that is 21 bytes besides the data and its 3-byte length prefix: 384 − 24 = 360.
    /// The first request of a 600000-byte file: 66 bytes with empty data → 8 + 65 + 3 + 308 = 384.
    /// At offset 16 and a 44-byte limit, 24 bytes would need a 2-byte prefix (19 + 2 + 24 = 45): 23.
    @Test("upload chunk capacity: hand-computed cases")
    func chunkCapacityCases() {
        let big = ImageUpload(length: 600_000, fileSHA256: Self.sha)
        #expect(big.chunkCapacity(offset: 4096, frameLimit: 384) == 360)
        #expect(big.chunkCapacity(offset: 0, frameLimit: 384) == 308)
        #expect(big.chunkCapacity(offset: 16, frameLimit: 44) == 23)
        #expect(big.chunkCapacity(offset: 16, frameLimit: 40) == 20)
        #expect(big.chunkCapacity(offset: 16, frameLimit: 19) == 0)
        #expect(ImageUpload(length: 100, fileSHA256: Self.sha).chunkCapacity(offset: 90, frameLimit: 384) == 10)
        #expect(ImageUpload(length: 100, fileSHA256: Self.sha).chunkCapacity(offset: 100, frameLimit: 384) == 0)
    }

    @Test("upload chunk capacity: the request fits the limit exactly as encoded, one byte more would not")
    func chunkCapacityFits() throws {
        let upload = ImageUpload(length: 5_000_000, fileSHA256: Self.sha, upgradeOnly: false)
        for offset in [0, 1, 23, 24, 255, 256, 65535, 65536, 4_999_000] {
            for limit in stride(from: 30, through: 1200, by: 7) {
                let size = upload.chunkCapacity(offset: offset, frameLimit: limit)
                func frameSize(_ n: Int) throws -> Int {
                    let frame = SMPFrame(
                        header: SMPHeader(operation: .write, length: 0, group: 1, sequence: 0, command: 1),
                        payload: upload.payload(offset: offset, data: [UInt8](repeating: 0, count: n)))
                    return try frame.encoded().count
                }
                let left = upload.length - offset
                if size > 0 { #expect(try frameSize(size) <= limit, "offset \(offset) limit \(limit)") }
                if size < left { #expect(try frameSize(size + 1) > limit, "offset \(offset) limit \(limit)") }
            }
        }
    }

    @Test("upload answers: the offset wanted next, and match when sent")
    func uploadAnswer() throws {
        #expect(try ImageUploadAnswer.decode(.map(["rc": .int(0), "off": .int(384)])) == ImageUploadAnswer(offset: 384))
        #expect(try ImageUploadAnswer.decode(.map(["off": .int(3000), "match": .bool(true)])) == ImageUploadAnswer(offset: 3000, match: true))
        #expect(throws: SMPAnswerError("image upload", "has no offset")) { try ImageUploadAnswer.decode(.map([])) }
        #expect(throws: SMPAnswerError("image upload", "has no offset")) { try ImageUploadAnswer.decode(.map(["off": .int(-1)])) }
    }

    @Test("image state: absent flags are false (bootable true), absent image is 0; a slot without version is refused")
    func imageState() throws {
        let payload: CBOR = .map([
            "images": .array([
                .map(["slot": .int(0), "version": .text("0.8.7"), "hash": .bytes([1]), "active": .bool(true), "confirmed": .bool(true)]),
                .map(["image": .int(0), "slot": .int(1), "version": .text("0.8.8"), "hash": .bytes([2]), "bootable": .bool(false), "pending": .bool(true), "permanent": .bool(false)]),
            ]),
            "splitStatus": .int(0),
        ])
        let state = try ImageState.decode(payload)
        #expect(state.slots == [
            ImageSlot(slot: 0, version: "0.8.7", hash: [1], confirmed: true, active: true),
            ImageSlot(slot: 1, version: "0.8.8", hash: [2], bootable: false, pending: true),
        ])
        #expect(state.active?.version == "0.8.7")
        #expect(state.slot(withHash: [2])?.slot == 1)
        #expect(try ImageState.decode(state.payload) == state)
        #expect(throws: SMPAnswerError("image state", "has no images list")) { try ImageState.decode(.map([])) }
        #expect(throws: SMPAnswerError("image state", "lists a slot without its number or version")) {
            try ImageState.decode(.map(["images": .array([.map(["slot": .int(0)])])]))
        }
    }

    @Test("MCUmgr parameters: buffer size and count, or the caller's default when not supported")
    func parameters() throws {
        let reported = try MCUmgrParameters.decode(.map(["buf_size": .int(517), "buf_count": .int(4)]))
        #expect(reported == .reported(bufferSize: 517, bufferCount: 4))
        #expect(reported.bufferSize(or: 384) == 517)
        #expect(MCUmgrParameters.notSupported.bufferSize(or: 384) == 384)
        #expect(throws: SMPAnswerError("MCUmgr parameters", "has no buf_size and buf_count")) {
            try MCUmgrParameters.decode(.map(["buf_size": .int(517)]))
        }
    }
}
