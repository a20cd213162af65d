// SPDX-License-Identifier: GPL-2.0-or-later
import MCUmgr
import Testing

/// Frames written out by hand from the SMP specification's header layout and RFC 8949.
enum SMPFixtures {
    /// Image state read, sequence 0x42: read (0) in SMP version 2 (bits 3–4 = 1) → 0x08; flags 0;
    /// length 1; group 1; seq 0x42; command 0; payload `{}`.
    static let stateRead = "08 00 0001 0001 42 00 a0"

    /// Its answer (read response 1 | version 1 << 3 = 0x09), 67 (0x43) payload bytes:
    /// {"images": [{"slot": 0, "version": "0.8.8", "hash": h'0102', "bootable": true,
    /// "confirmed": true, "active": true}]}
    static let stateAnswerPayload = """
        a1 66696d61676573 81 a6
        64736c6f74 00
        6776657273696f6e 65302e382e38
        6468617368 420102
        68626f6f7461626c65 f5
        69636f6e6669726d6564 f5
        66616374697665 f5
        """
    static let stateAnswer = "09 00 0043 0001 42 00" + stateAnswerPayload

    static let runningSlot = ImageSlot(
        slot: 0, version: "0.8.8", hash: [1, 2], bootable: true, confirmed: true, active: true)
}

@Suite("SMP frames", .timeLimit(.minutes(5)))
struct SMPFrameTests {
    @Test("an image state read request encodes to its hand-computed bytes")
    func requestBytes() throws {
        let frame = SMPFrame(
            header: SMPHeader(operation: .read, length: 0, group: 1, sequence: 0x42, command: 0), payload: .map([]))
        #expect(hexString(try frame.encoded()) == hexString(hex(SMPFixtures.stateRead)))
        #expect(try SMPFrame.decode(hex(SMPFixtures.stateRead)) == SMPFrame(header: SMPHeader(operation: .read, length: 1, group: 1, sequence: 0x42, command: 0), payload: .map([])))
    }

    @Test("its answer decodes to the slot it lists, in SMP version 2 and version 1 headers")
    func answerBytes() throws {
        #expect(hex(SMPFixtures.stateAnswerPayload).count == 0x43)
        for first in ["09", "01"] {
            let bytes = hex(first + SMPFixtures.stateAnswer.dropFirst(2))
            let frame = try SMPFrame.decode(bytes)
            #expect(frame.header == SMPHeader(operation: .readResponse, version: first == "09" ? 1 : 0, length: 0x43, group: 1, sequence: 0x42, command: 0))
            #expect(frame.error == nil)
            #expect(try ImageState.decode(frame.payload) == ImageState(slots: [SMPFixtures.runningSlot]))
            // Written back the same (the entry as Zephyr orders it, with `image` first).
            #expect(try CBOR.decode(ImageState(slots: [SMPFixtures.runningSlot]).payload.encoded)["images"]?.arrayValue?.first?["hash"] == .bytes([1, 2]))
        }
    }

    @Test("header fields: big-endian length and group, sequence and command bytes")
    func header() throws {
        let h = SMPHeader(operation: .writeResponse, flags: 0x5a, length: 0x1234, group: 0xabcd, sequence: 7, command: 9)
        #expect(h.encoded == [0x0b, 0x5a, 0x12, 0x34, 0xab, 0xcd, 7, 9])
        #expect(try SMPHeader.decode(h.encoded) == h)
    }

    @Test("malformed frames get typed errors")
    func malformed() {
        let cases: [(String, SMPFrameError)] = [
            ("08 00 0001 0001 42", .tooShort(7)),
            ("28 00 0000 0001 42 00", .badHeader(0x28)),  // a reserved bit
            ("0c 00 0000 0001 42 00", .badHeader(0x0c)),  // operation 4
            ("10 00 0000 0001 42 00", .unsupportedVersion(2)),
            ("09 00 0002 0001 42 00 a0", .lengthMismatch(declared: 2, actual: 1)),
            ("09 00 0001 0001 42 00 a0 00", .lengthMismatch(declared: 1, actual: 2)),
            ("09 00 0001 0001 42 00 01", .payloadNotAMap),
            ("09 00 0001 0001 42 00 a1", .badPayload(.lengthPastEnd(at: 0, declared: 1, remaining: 0))),
            ("09 00 0003 0001 42 00 a1 6161", .badPayload(.truncated(at: 3))),
        ]
        for (bytes, error) in cases {
            #expect(throws: error, "\(bytes)") { try SMPFrame.decode(hex(bytes)) }
        }
    }

    @Test("errors: a version 1 rc names an MGMT_ERR, a version 2 err names the group's code; rc 0 is none")
    func errors() throws {
        func frame(_ payload: CBOR) -> SMPFrame {
            SMPFrame(header: SMPHeader(operation: .writeResponse, length: 0, group: 1, sequence: 0, command: 1), payload: payload)
        }
        let legacy = try #require(frame(.map(["rc": .int(6)])).error)
        #expect(legacy == SMPError(group: 1, rc: 6, isGroupCode: false))
        #expect(legacy.message == "bad state")
        #expect(frame(.map(["rc": .int(8)])).error?.isNotSupported == true)
        let v2 = try #require(frame(.map(["err": .map(["group": .int(1), "rc": .int(9)])])).error)
        #expect(v2 == SMPError(group: 1, rc: 9, isGroupCode: true))
        #expect(v2.message == "no free slot")
        #expect(v2.description.contains("no free slot"))
        #expect(frame(.map(["err": .map(["group": .int(64), "rc": .int(3)])])).error?.message == "error 3")
        #expect(frame(.map(["rc": .int(0), "off": .int(10)])).error == nil)
        #expect(frame(.map(["off": .int(10)])).error == nil)
    }
}
