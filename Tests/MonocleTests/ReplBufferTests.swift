// SPDX-License-Identifier: GPL-2.0-or-later
import Monocle
import Testing

@Suite("Raw REPL output parsing", .timeLimit(.minutes(5)))
struct ReplBufferTests {
    /// A reply as the device sends it for `print(device.VERSION)` (monocle-protocol.md §2.2).
    static let versionReply = Array("OKv23.248.0754\r\n\u{04}\u{04}>".utf8)
    static let traceback = Array(
        "OK\u{04}Traceback (most recent call last):\r\n  File \"<stdin>\", line 1, in <module>\r\nNameError: name 'x' isn't defined\r\n\u{04}>".utf8)

    @Test("a reply split at every byte position parses the same, never early")
    func everySplit() {
        for reply in [Self.versionReply, Self.traceback] {
            var whole = ReplBuffer()
            whole.append(reply)
            let expected = whole.takeResult()
            #expect(expected != nil)
            for cut in 0..<reply.count {
                var buffer = ReplBuffer()
                buffer.append(Array(reply[..<cut]))
                #expect(buffer.takeResult() == nil, "parsed early at \(cut)")
                buffer.append(Array(reply[cut...]))
                #expect(buffer.takeResult() == expected, "cut at \(cut)")
                #expect(buffer.bytes.isEmpty, "leftover after cut at \(cut)")
            }
        }
        var buffer = ReplBuffer()
        buffer.append(Self.versionReply)
        #expect(buffer.takeResult() == ReplResult(stdout: "v23.248.0754\r\n", stderr: ""))
    }

    @Test("one byte at a time, the banner and the result are found")
    func byteByByte() {
        var buffer = ReplBuffer()
        var banners = 0
        var results: [ReplResult] = []
        for byte in Array("\r\nraw REPL; CTRL-B to exit\r\n>".utf8) + Self.versionReply {
            buffer.append([byte])
            if buffer.takeBanner() { banners += 1 }
            if let r = buffer.takeResult() { results.append(r) }
        }
        #expect(banners == 1)
        #expect(results.map(\.stdout) == ["v23.248.0754\r\n"])
    }

    @Test("stale banners, the friendly banner and an old traceback in front are skipped")
    func staleInFront() {
        var buffer = ReplBuffer()
        let stale =
            "Traceback (most recent call last):\r\n  File \"main.py\", line 40, in <module>\r\nKeyboardInterrupt: \r\n"
            + "MicroPython v1.20.0-monocle on 2023-09-05; Monocle with nRF52832\r\nType \"help()\" for more information.\r\n>>> "
            + "\r\nraw REPL; CTRL-B to exit\r\n>raw REPL; CTRL-B to exit\r\n>"
        buffer.append(Array(stale.utf8))
        let first = buffer.takeBanner()
        let second = buffer.takeBanner()  // the stale one after it
        let third = buffer.takeBanner()
        #expect(first && second && !third)
        buffer.append(Self.versionReply)
        #expect(buffer.takeResult()?.stdout == "v23.248.0754\r\n")
    }

    @Test("a traceback gives its exception line")
    func tracebackLine() {
        var buffer = ReplBuffer()
        buffer.append(Self.traceback)
        let result = buffer.takeResult()
        #expect(result?.stdout == "")
        #expect(result?.exception == "NameError: name 'x' isn't defined")
    }

    @Test("a lost prompt byte leaves the next reply intact; a lost end marker never parses alone")
    func lostBytes() {
        var buffer = ReplBuffer()
        buffer.append(Array("OKa\u{04}\u{04}".utf8) + Array("OKb\u{04}\u{04}>".utf8))
        #expect(buffer.takeResult()?.stdout == "a")
        #expect(buffer.takeResult()?.stdout == "b")
        var lost = ReplBuffer()
        lost.append(Array("OKa\u{04}>".utf8))  // the second \x04 went missing
        #expect(lost.takeResult() == nil)
    }

    @Test("the buffer is bounded")
    func bounded() {
        var buffer = ReplBuffer(limit: 100)
        buffer.append(Array(repeating: 0x41, count: 1000))
        #expect(buffer.bytes.count == 100)
    }
}
