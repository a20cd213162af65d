// SPDX-License-Identifier: GPL-2.0-or-later
import Frame
import Testing

@Suite("Lua upload escaping and chunking", .timeLimit(.minutes(5)))
struct LuaEscapeTests {
    /// Every kind of unit, packed close: 2-, 3- and 4-byte UTF-8, the short escapes, decimal
    /// escapes followed by digits, CRLF and lone CRs.
    static let fixture = Array(
        "local s = \"café\" -- 'q'\r\n\tp = 'C:\\\\dir'\n€日本語😀𝄞\u{0}1\u{1}23\u{7}\u{1B}[0m\u{7F}9 ü\r\nα\\\"β\r\"'\\\t\n😀é€\u{0}".utf8)
    static var expected: [UInt8] { fixture.filter { $0 != 0x0D } }

    @Test("the whole escaped text reads back as the original without \\r, with no raw control byte")
    func whole() throws {
        let escaped = LuaEscape.escape(Self.fixture)
        #expect(LuaUnescape.bytes(escaped) == Self.expected)
        #expect(!escaped.utf8.contains { $0 < 0x20 || $0 == 0x7F })
        #expect(LuaEscape.escape(Array("a\\b\n\t'\"\r\u{0}\u{1F}\u{7F}é".utf8)) == #"a\\b\n\t\'\"\000\031\127é"#)
    }

    @Test("every limit from 4 to 80: chunks within it, each valid UTF-8 and whole escapes, reading back exactly")
    func sweep() throws {
        var endings = Set<String>()
        var starts = Set<String>()
        for limit in 4...80 {
            let chunks = try LuaEscape.chunks(Self.fixture, limit: limit)
            var joined: [UInt8] = []
            for (index, chunk) in chunks.enumerated() {
                let bytes = Array(chunk.utf8)
                #expect(!bytes.isEmpty && bytes.count <= limit, "limit \(limit), chunk \(index)")
                // Built from whole sequences: nothing was replaced in decoding.
                #expect(String(validating: bytes, as: UTF8.self) != nil)
                #expect(!chunk.unicodeScalars.contains("\u{FFFD}"))
                // Each reads back on its own: no escape cut in two (a cut `\000` would read as
                // `\0` + "00", or leave a trailing backslash, and the sum would differ).
                let alone = try #require(LuaUnescape.bytes(chunk), "limit \(limit), chunk \(index): \(chunk)")
                joined += alone
                if index + 1 < chunks.count {
                    endings.insert(Self.kind(ofLastUnitIn: bytes))
                    starts.insert(Self.kind(ofFirstUnitIn: Array(chunks[index + 1].utf8)))
                }
                // Full chunks: the next unit would not have fitted.
                if index + 1 < chunks.count {
                    #expect(bytes.count > limit - LuaEscape.longestUnit)
                }
            }
            #expect(joined == Self.expected, "limit \(limit)")
            #expect(LuaUnescape.bytes(chunks.joined()) == Self.expected)
        }
        // The sweep put every kind of unit on both sides of a cut.
        let kinds: Set<String> = ["ascii", "utf8-2", "utf8-3", "utf8-4", "escape", "decimal"]
        #expect(endings == kinds)
        #expect(starts == kinds)
    }

    @Test("bytes that are not UTF-8 survive as decimal escapes")
    func invalidUTF8() throws {
        let bytes: [UInt8] = [0x41, 0xFF, 0xC3, 0x28, 0xE2, 0x82, 0x41, 0xF0, 0x9F, 0x98, 0x80, 0xED, 0xA0, 0x80]
        let escaped = LuaEscape.escape(bytes)
        #expect(LuaUnescape.bytes(escaped) == bytes)
        #expect(escaped.hasPrefix(#"A\255\195("#))
        for limit in 4...12 {
            let chunks = try LuaEscape.chunks(bytes, limit: limit)
            #expect(chunks.allSatisfy { $0.utf8.count <= limit && LuaUnescape.bytes($0) != nil })
            #expect(chunks.compactMap(LuaUnescape.bytes).joined().elementsEqual(bytes))
        }
    }

    @Test("a limit below the longest unit is refused; empty contents give no chunk")
    func edges() throws {
        #expect(throws: LuaUploadError.limitTooSmall(3)) { try LuaEscape.chunks(Self.fixture, limit: 3) }
        #expect(try LuaEscape.chunks([], limit: 10).isEmpty)
        #expect(try LuaEscape.chunks(Array("\r\r".utf8), limit: 10).isEmpty)
    }

    @Test("file commands: open, writes within the Lua string limit, close; each with a reply")
    func fileCommands() throws {
        for limit in [52, 64, 244] {
            let commands = try LuaFileUpload.commands(name: "glassd_app.lua", contents: Self.fixture, maxLuaString: limit)
            #expect(commands.first == "_gf=frame.file.open('glassd_app.lua','w');print(1)")
            #expect(commands.last == "_gf:close();_gf=nil;print(1)")
            #expect(commands.allSatisfy { $0.utf8.count <= limit && $0.hasSuffix(";print(1)") })
            var written: [UInt8] = []
            for write in commands.dropFirst().dropLast() {
                let prefix = "_gf:write(\"", suffix = "\");print(1)"
                #expect(write.hasPrefix(prefix) && write.hasSuffix(suffix))
                written += try #require(LuaUnescape.bytes(String(write.dropFirst(prefix.count).dropLast(suffix.count))))
            }
            #expect(written == Self.expected)
        }
        // The overhead is that of the real wrapper.
        #expect(LuaFileUpload.writeOverhead == "_gf:write(\"\");print(1)".utf8.count)
        #expect(throws: LuaUploadError.badFileName("a'b.lua")) { try LuaFileUpload.commands(name: "a'b.lua", contents: [], maxLuaString: 244) }
        #expect(throws: LuaUploadError.badFileName("")) { try LuaFileUpload.open("") }
        #expect(throws: LuaUploadError.badFileName("dir/x.lua")) { try LuaFileUpload.remove("dir/x.lua") }
        #expect(throws: LuaUploadError.limitTooSmall(20)) { try LuaFileUpload.commands(name: "glassd_app.lua", contents: [], maxLuaString: 20) }
    }

    static func kind(ofLastUnitIn bytes: [UInt8]) -> String {
        // A decimal escape: backslash and three digits at the end, the backslash not escaped.
        if bytes.count >= 4, bytes[bytes.count - 4] == 0x5C, bytes.suffix(3).allSatisfy({ (0x30...0x39).contains($0) }),
            !endsInEscapedBackslash(Array(bytes.dropLast(4)))
        {
            return "decimal"
        }
        if bytes.count >= 2, bytes[bytes.count - 2] == 0x5C, !endsInEscapedBackslash(Array(bytes.dropLast(2))) { return "escape" }
        var start = bytes.count - 1
        while start > 0, bytes[start] & 0xC0 == 0x80 { start -= 1 }
        let length = bytes.count - start
        return length == 1 ? "ascii" : "utf8-\(length)"
    }

    static func kind(ofFirstUnitIn bytes: [UInt8]) -> String {
        guard let first = bytes.first else { return "none" }
        if first == 0x5C { return bytes.count >= 2 && (0x30...0x39).contains(bytes[1]) ? "decimal" : "escape" }
        if first < 0x80 { return "ascii" }
        return first >= 0xF0 ? "utf8-4" : first >= 0xE0 ? "utf8-3" : "utf8-2"
    }

    /// Whether the bytes end in an odd run of backslashes (the last one escapes what follows).
    private static func endsInEscapedBackslash(_ bytes: [UInt8]) -> Bool {
        bytes.reversed().prefix(while: { $0 == 0x5C }).count % 2 == 1
    }
}
