// SPDX-License-Identifier: GPL-2.0-or-later
import AssistantEngine
import Concurrency
@testable import Glasses
import Synchronization
import Testing

@Suite("Answer stream to the glasses", .timeLimit(.minutes(5)))
struct AnswerStreamTests {
    /// A link whose writes are recorded; with `held`, each write waits until the test lets it go.
    final class Link: Sendable {
        let sent = Mutex<[AnswerStream.Piece]>([])
        let written = Pulse()
        let release = Pulse()
        let held: Bool
        init(held: Bool = false) { self.held = held }

        func send(_ message: AnswerStream.Piece) async throws {
            let ticket = release.ticket()
            sent.withLock { $0.append(message) }
            written.pulse()
            if held { await release.wait(after: ticket) }
        }

        var messages: [AnswerStream.Piece] { sent.withLock { $0 } }

        func waitFor(count: Int) async {
            while true {
                let ticket = written.ticket()
                if sent.withLock({ $0.count }) >= count { return }
                await written.wait(after: ticket)
            }
        }
    }

    @Test("whole words only while streaming; pieces that arrive during a slow write go out together")
    func wordsAndCoalescing() async throws {
        let link = Link(held: true)
        let stream = AnswerStream(maxPayload: 240) { try await link.send($0) }
        let writer = Task { try await stream.run() }
        stream.heading("> what is the time")
        stream.append("echo:")
        stream.append(" what")
        await link.waitFor(count: 1)
        link.release.pulse()
        await link.waitFor(count: 2)
        // The heading went first; "what" has no end yet, so only "echo: " could go.
        #expect(link.messages == [.heading("> what is the time\n"), .text("echo: ")])
        // While that write is under way, the rest arrives: it goes out in one write.
        stream.append(" is t")
        stream.append("he ti")
        stream.append("me")
        stream.finish()
        link.release.pulse()
        await link.waitFor(count: 3)
        link.release.pulse()
        await link.waitFor(count: 4)
        link.release.pulse()
        try await writer.value
        #expect(link.messages == [
            .heading("> what is the time\n"), .text("echo: "), .text("what is the time"), .end,
        ])
    }

    @Test("an error follows the text in red, then the end; text is fitted to the font (ASCII here); a long word is not held back")
    func errorAndEnd() async throws {
        let link = Link()
        let stream = AnswerStream(maxPayload: 240, prepare: DisplayText.ascii) { try await link.send($0) }
        stream.append("Caf\u{E9} ")
        stream.append(String(repeating: "x", count: 30))
        let writer = Task { try await stream.run() }
        await link.waitFor(count: 2)
        stream.finish(error: "No answer in time \u{2014} try again.")
        try await writer.value
        #expect(link.messages == [
            .text("Cafe "), .text(String(repeating: "x", count: 30)),
            .error("No answer in time - try again."), .end,
        ])
    }

    @Test("text longer than one message is split; a cancelled stream writes nothing more, not even end:")
    func splitAndCancel() async throws {
        let link = Link()
        let stream = AnswerStream(maxPayload: 10) { try await link.send($0) }
        stream.append("one two three four ")
        stream.finish()
        try await stream.run()
        #expect(link.messages == [.text("one two "), .text("three "), .text("four "), .end])

        let quiet = Link()
        let cancelled = AnswerStream(maxPayload: 10) { try await quiet.send($0) }
        cancelled.append("never ")
        cancelled.cancel()
        cancelled.finish()
        try await cancelled.run()
        #expect(quiet.messages.isEmpty)
    }

    @Test("what can be shown now", arguments: [
        ("echo: wh", false, "echo: ", "wh"), ("no-break", false, "", "no-break"), ("line\nnext", false, "line\n", "next"),
        ("end", true, "end", ""), (String(repeating: "y", count: 27), false, String(repeating: "y", count: 27), ""),
    ])
    func take(pending: String, all: Bool, taken: String, left: String) {
        var rest = pending
        #expect(AnswerStream.take(&rest, all: all) == taken)
        #expect(rest == left)
    }
}

@Suite("Display text chunks", .timeLimit(.minutes(5)))
struct DisplayTextChunkTests {
    @Test("chunks never split a character's UTF-8 bytes, and break after spaces when they can")
    func utf8() {
        let text = "Grüße aus Köln, 東京 und 🙂🙂🙂 zurück"
        for limit in 4...20 {
            let chunks = DisplayText.chunks(text, limit: limit)
            #expect(chunks.joined() == text, "limit \(limit)")
            for chunk in chunks {
                #expect(chunk.utf8.count <= limit, "limit \(limit): \(chunk)")
                #expect(!chunk.contains("\u{FFFD}"), "limit \(limit): a character was cut")
            }
        }
        #expect(DisplayText.chunks("ab cd ef", limit: 5) == ["ab ", "cd ef"])
    }
}
