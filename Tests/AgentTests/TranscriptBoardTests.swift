// SPDX-License-Identifier: GPL-2.0-or-later
import Agent
import Testing

@Suite("Transcript board", .timeLimit(.minutes(5)))
struct TranscriptBoardTests {
    private typealias Line = TranscriptBoard.Line

    private func user(_ text: String, _ ts: UInt64, final: Bool = false) -> Transcript {
        Transcript(role: .user, text: text, isFinal: final, textTS: ts)
    }

    private func assistant(_ text: String, _ ts: UInt64, final: Bool = false) -> Transcript {
        Transcript(role: .assistant, text: text, isFinal: final, textTS: ts)
    }

    @Test("a non-final piece replaces the open line; a final one closes it and is handed back")
    func replaceAndFinalize() throws {
        var board = TranscriptBoard()
        #expect(board.apply(user("what", 10))?.finalized == nil)
        #expect(board.apply(user("what is", 20)) != nil)
        let applied = board.apply(user("What is the time?", 30, final: true))
        let change = try #require(applied)
        #expect(change.finalized == Line(role: .user, text: "What is the time?", isFinal: true, textTS: 30))
        #expect(board.lines == [Line(role: .user, text: "What is the time?", isFinal: true, textTS: 30)])
        // The next piece opens a new line.
        _ = board.apply(user("and", 40))
        #expect(board.lines.map(\.text) == ["What is the time?", "and"])
    }

    @Test("speakers keep their own lines; assistant text replaces, never appends")
    func perRole() {
        var board = TranscriptBoard()
        _ = board.apply(user("tell me", 10))
        _ = board.apply(assistant("It is", 15))
        _ = board.apply(user("tell me a joke", 20, final: true))
        _ = board.apply(assistant("It is noon", 25))
        let change = board.apply(assistant("It is noon.", 30, final: true))
        #expect(change?.finalized?.text == "It is noon.")
        #expect(
            board.lines == [
                Line(role: .user, text: "tell me a joke", isFinal: true, textTS: 20),
                Line(role: .assistant, text: "It is noon.", isFinal: true, textTS: 30),
            ])
    }

    @Test("a piece not newer than the speaker's last final line is dropped")
    func stale() {
        var board = TranscriptBoard()
        _ = board.apply(user("done", 50, final: true))
        #expect(board.apply(user("late", 50)) == nil)
        #expect(board.apply(user("older", 40, final: true)) == nil)
        #expect(board.apply(assistant("other speaker", 45)) != nil)  // per speaker
        #expect(board.apply(user("newer", 51)) != nil)
        #expect(board.lines.map(\.text) == ["done", "other speaker", "newer"])
    }

    @Test("empty text, raw items and the same text again change nothing")
    func ignored() {
        var board = TranscriptBoard()
        #expect(board.apply(user("", 1)) == nil)
        #expect(board.apply(user(" \n\t", 2, final: true)) == nil)
        #expect(
            board.apply(
                Transcript(role: .assistant, text: #"{"type":"reasoning"}"#, isFinal: true, textTS: 3, dataType: "raw"))
                == nil)
        #expect(board.lines.isEmpty)
        #expect(board.apply(user("hi", 4)) != nil)
        #expect(board.apply(user("hi", 5)) == nil)
        #expect(board.apply(user("hi", 6, final: true))?.finalized?.text == "hi")
    }

    @Test("only the last lines are kept")
    func bounded() {
        var board = TranscriptBoard()
        for i in 1...50 { _ = board.apply(user("line \(i)", UInt64(i), final: true)) }
        #expect(board.lines.count == TranscriptBoard.maxLines)
        #expect(board.lines.first?.text == "line 31")
        #expect(board.lines.last?.text == "line 50")
    }
}
