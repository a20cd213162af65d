// SPDX-License-Identifier: GPL-2.0-or-later
import MCUmgr
import Testing

@Suite("CBOR codec (RFC 8949 subset)", .timeLimit(.minutes(5)))
struct CBORTests {
    /// RFC 8949 Appendix A: value and its preferred encoding, for the kinds the encoder writes.
    static let definite: [(CBOR, String)] = [
        (.unsigned(0), "00"), (.unsigned(1), "01"), (.unsigned(10), "0a"), (.unsigned(23), "17"),
        (.unsigned(24), "1818"), (.unsigned(25), "1819"), (.unsigned(100), "1864"), (.unsigned(1000), "1903e8"),
        (.unsigned(1_000_000), "1a000f4240"), (.unsigned(1_000_000_000_000), "1b000000e8d4a51000"),
        (.unsigned(18_446_744_073_709_551_615), "1bffffffffffffffff"),
        (.negative(18_446_744_073_709_551_615), "3bffffffffffffffff"),  // −18446744073709551616
        (.int(-1), "20"), (.int(-10), "29"), (.int(-100), "3863"), (.int(-1000), "3903e7"),
        (.bool(false), "f4"), (.bool(true), "f5"), (.null, "f6"), (.undefined, "f7"),
        (.bytes([]), "40"), (.bytes([1, 2, 3, 4]), "4401020304"),
        (.text(""), "60"), (.text("a"), "6161"), (.text("IETF"), "6449455446"), (.text("\"\\"), "62225c"),
        (.text("\u{00fc}"), "62c3bc"), (.text("\u{6c34}"), "63e6b0b4"),
        (.array([]), "80"), (.array([.int(1), .int(2), .int(3)]), "83010203"),
        (.array([.int(1), .array([.int(2), .int(3)]), .array([.int(4), .int(5)])]), "8301820203820405"),
        (.array((1...25).map { .int($0) }), "98190102030405060708090a0b0c0d0e0f101112131415161718181819"),
        (.map([]), "a0"),
        (.map([CBOR.Pair(.int(1), .int(2)), CBOR.Pair(.int(3), .int(4))]), "a201020304"),
        (.map(["a": .int(1), "b": .array([.int(2), .int(3)])]), "a26161016162820203"),
        (.array([.text("a"), .map(["b": .text("c")])]), "826161a161626163"),
        (.map(["a": .text("A"), "b": .text("B"), "c": .text("C"), "d": .text("D"), "e": .text("E")]),
         "a56161614161626142616361436164614461656145"),
    ]

    @Test("Appendix A items encode to their bytes and decode back", arguments: 0..<definite.count)
    func appendixA(index: Int) throws {
        let (value, bytes) = Self.definite[index]
        #expect(hexString(value.encoded) == bytes)
        #expect(try CBOR.decode(hex(bytes)) == value)
    }

    @Test("Appendix A floats decode (half, single, double)")
    func floats() throws {
        let cases: [(String, Double)] = [
            ("f90000", 0.0), ("f93e00", 1.5), ("f97bff", 65504.0), ("fa47c35000", 100000.0),
            ("fb3ff199999999999a", 1.1), ("f90001", 5.960464477539063e-8), ("f9c400", -4.0), ("f97c00", .infinity),
            ("fbc010666666666666", -4.1),
        ]
        for (bytes, value) in cases { #expect(try CBOR.decode(hex(bytes)) == .float(value), "\(bytes)") }
        #expect(CBOR.float(1.1).encoded == hex("fb3ff199999999999a"))
    }

    @Test("a tag stands for the item it wraps")
    func tags() throws {
        #expect(try CBOR.decode(hex("c074323031332d30332d32315432303a30343a30305a")) == .text("2013-03-21T20:04:00Z"))
        #expect(try CBOR.decode(hex("d82076687474703a2f2f7777772e6578616d706c652e636f6d")) == .text("http://www.example.com"))
    }

    @Test("Appendix A indefinite-length items decode")
    func indefinite() throws {
        let one45: CBOR = .array([.int(1), .array([.int(2), .int(3)]), .array([.int(4), .int(5)])])
        let cases: [(String, CBOR)] = [
            ("5f42010243030405ff", .bytes([1, 2, 3, 4, 5])),
            ("7f657374726561646d696e67ff", .text("streaming")),
            ("9fff", .array([])),
            ("9f018202039f0405ffff", one45), ("9f01820203820405ff", one45), ("83018202039f0405ff", one45),
            ("83019f0203ff820405", one45),
            ("9f0102030405060708090a0b0c0d0e0f101112131415161718181819ff", .array((1...25).map { .int($0) })),
            ("bf61610161629f0203ffff", .map(["a": .int(1), "b": .array([.int(2), .int(3)])])),
            ("826161bf61626163ff", .array([.text("a"), .map(["b": .text("c")])])),
            ("bf6346756ef563416d7421ff", .map(["Fun": .bool(true), "Amt": .int(-2)])),
        ]
        for (bytes, value) in cases {
            let decoded = try CBOR.decode(hex(bytes))
            #expect(decoded == value, "\(bytes)")
            // Written back with definite lengths.
            #expect(try CBOR.decode(decoded.encoded) == value)
        }
    }

    @Test("map lookups: text keys, other key types kept, the first of duplicates")
    func lookups() throws {
        let map = try CBOR.decode(hex("a4 6161 01 01 02 6161 03 6162 f5"))
        #expect(map["a"]?.intValue == 1)
        #expect(map["b"]?.boolValue == true)
        #expect(map["c"] == nil)
        guard case .map(let pairs) = map else { Issue.record("not a map"); return }
        #expect(pairs[1] == CBOR.Pair(.int(1), .int(2)))
        #expect(CBOR.negative(UInt64.max).intValue == nil)
        #expect(CBOR.int(Int.min).intValue == Int.min)
    }

    @Test("random nested values survive a round trip")
    func roundTrip() throws {
        var seed: UInt64 = 0x1234_5678
        func next() -> UInt64 {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return seed >> 11
        }
        func value(_ depth: Int) -> CBOR {
            switch next() % (depth > 3 ? 6 : 8) {
            case 0: .unsigned(next() >> (next() % 64))
            case 1: .negative(next() >> (next() % 64))
            case 2: .bytes((0..<next() % 300).map { _ in UInt8(truncatingIfNeeded: next()) })
            case 3: .text(String(repeating: "ü", count: Int(next() % 40)))
            case 4: .bool(next() % 2 == 0)
            case 5: .null
            case 6: .array((0..<next() % 5).map { _ in value(depth + 1) })
            default: .map((0..<next() % 5).map { i in CBOR.Pair(.text("k\(i)"), value(depth + 1)) })
            }
        }
        for _ in 0..<300 {
            let v = value(0)
            #expect(try CBOR.decode(v.encoded) == v)
        }
    }

    @Test("hostile input gets a typed error, never a trap or a huge allocation")
    func hostile() {
        let deep17 = [UInt8](repeating: 0x81, count: 17) + [0x00]
        let cases: [(String, [UInt8], CBORError)] = [
            ("byte string of 2^64-1", hex("5bffffffffffffffff"), .lengthPastEnd(at: 0, declared: UInt64.max, remaining: 0)),
            ("array of 2^32 items", hex("9b0000000100000000 00"), .lengthPastEnd(at: 0, declared: 1 << 32, remaining: 1)),
            ("map of 3 pairs in 5 bytes", hex("a3 0102 0304 05"), .lengthPastEnd(at: 0, declared: 3, remaining: 5)),
            ("text longer than the rest", hex("64494554"), .lengthPastEnd(at: 0, declared: 4, remaining: 3)),
            ("17 nested arrays", deep17, .tooDeep(limit: 16)),
            ("1000 nested indefinite arrays", [UInt8](repeating: 0x9f, count: 1000), .tooDeep(limit: 16)),
            ("1000 nested tags", [UInt8](repeating: 0xc0, count: 1000), .tooDeep(limit: 16)),
            ("cut integer", hex("1903"), .truncated(at: 2)),
            ("cut item in an array", hex("82011903"), .truncated(at: 4)),
            ("indefinite array without its break", hex("9f01"), .truncated(at: 2)),
            ("empty input", [], .truncated(at: 0)),
            ("invalid UTF-8", hex("62c328"), .invalidUTF8(at: 0)),
            ("text chunk in a byte string", hex("5f6161ff"), .badChunk(at: 1)),
            ("nested indefinite chunk", hex("7f7f6161ffff"), .badChunk(at: 1)),
            ("a break alone", hex("ff"), .unexpectedBreak(at: 0)),
            ("a break as a map value", hex("bf6161ff"), .unexpectedBreak(at: 3)),
            ("reserved additional information", hex("1c"), .malformedHead(at: 0)),
            ("indefinite integer", hex("1f"), .malformedHead(at: 0)),
            ("simple value 16", hex("f0"), .unsupportedSimple(at: 0, value: 16)),
            ("simple value 255", hex("f8ff"), .unsupportedSimple(at: 0, value: 255)),
            ("two items", hex("0000"), .trailingBytes(at: 1)),
        ]
        for (name, bytes, error) in cases {
            #expect(throws: error, "\(name)") { try CBOR.decode(bytes) }
        }
        // Exactly the limit is fine.
        #expect(throws: Never.self) { try CBOR.decode([UInt8](repeating: 0x81, count: 16) + [0x00]) }
    }
}
