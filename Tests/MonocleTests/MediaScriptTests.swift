// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation
import Glasses
import Monocle
import Testing

/// glassd_media.py (the Monocle's recording) on a real MicroPython, its microphone, camera and link
/// stood in for by small modules of the test's own.
@Suite("The Monocle's recording script", .timeLimit(.minutes(5)), .enabled(if: MicroPython.available))
struct MediaScriptTests {
    /// The stand-ins: the microphone hands out `ready` bytes (None when there are none), the link
    /// keeps what is sent, with 249 bytes of room (a 256-byte MTU less the 4-byte prefix).
    static let stubs: [(String, String)] = [
        ("microphone.py", """
            args = {}
            ready = b''
            def record(**kw):
                args.update(kw)
            def read(n):
                global ready
                if not ready:
                    return None
                out, ready = ready[:n], ready[n:]
                return out
            """),
        ("glassd_link.py", """
            sent = []
            def room():
                return 249
            def send(prefix, payload=b''):
                sent.append((prefix, payload))
                return True
            """),
        ("camera.py", """
            def capture():
                pass
            def read(n):
                return None
            """),
    ]

    private func run(_ commands: [String]) async throws -> String {
        let directory = try MicroPython.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        for (name, text) in Self.stubs {
            try text.write(toFile: directory + "/" + name, atomically: true, encoding: .utf8)
        }
        let media = try #require(DeviceScripts.bundled.files.first { $0.name == "glassd_media.py" })
        try Data(media.contents).write(to: URL(fileURLWithPath: directory + "/glassd_media.py"))
        return try await MicroPython.run(["import sys\nsys.path.insert(0, '.')"] + commands, in: directory)
    }

    @Test("a question records at 16 kHz 8-bit and says so; the wake phrase's listening at 8 kHz; a photo's ist: names the question's format")
    func formats() async throws {
        let out = try await run([
            "import microphone, glassd_link as link, glassd_media as media",
            "media.record(6)\nprint(microphone.args['sample_rate'], microphone.args['bit_depth'], media.FORMAT.decode())",
            "media.listen()\nprint(microphone.args['sample_rate'], microphone.args['bit_depth'])",
            "media.photo(b'ist:', media.FORMAT)\nprint(link.sent[0][0].decode() + link.sent[0][1].decode())",
        ])
        #expect(out.split(separator: "\n") == ["16000 8 16,8", "8000 8", "ist:16,8"], "\(out)")
    }

    @Test("a pump sends up to two full messages of what the microphone has (the notification queue's depth), the rest at the next")
    func pumpCatchesUp() async throws {
        let out = try await run([
            "import microphone, glassd_link as link, glassd_media as media",
            "media.record(6)\nmicrophone.ready = bytes(range(256)) * 3",
            "media.pump()\nprint([len(p) for _, p in link.sent])",
            "media.pump()\nprint([len(p) for _, p in link.sent])",
            "print(bytes(b''.join(p for _, p in link.sent)) == bytes(range(256)) * 3, {c for c, _ in link.sent})",
        ])
        #expect(out.split(separator: "\n") == ["[249, 249]", "[249, 249, 249, 21]", "True {b'dat:'}"], "\(out)")
    }
}
