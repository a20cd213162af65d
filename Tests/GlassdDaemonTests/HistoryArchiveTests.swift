// SPDX-License-Identifier: GPL-2.0-or-later
import AssistantEngine
import Foundation
import Storage
import Testing

@Suite("History search, export and import", .timeLimit(.minutes(5)))
struct HistoryArchiveTests {
    private func directory() -> String {
        NSTemporaryDirectory() + "glassd-archive-\(UUID().uuidString)"
    }

    /// A database in a fresh directory with these turns (question, answer) in its conversation.
    private func database(_ turns: [(String, String)]) async throws -> GlassdDatabase {
        let database = try GlassdDatabase(directory: directory())
        let store = SQLiteConversationStore(database: database)
        for (i, turn) in turns.enumerated() {
            try await store.appendTurn(
                queryID: ":1.\(i)/2", question: turn.0, answer: turn.1, mode: .assistant, at: Int64(1000 + i))
        }
        return database
    }

    /// Runs `body` with a descriptor of a scratch file opened with `flags`.
    private func withFile<R>(_ path: String, _ flags: Int32, _ body: (Int32) async throws -> R) async throws -> R {
        let fd = open(path, flags | O_CLOEXEC, 0o600)
        try #require(fd >= 0)
        defer { close(fd) }
        return try await body(fd)
    }

    private func importText(_ text: String, into archive: HistoryArchive) async throws(HistoryError) -> Int {
        let path = directory() + ".jsonl"
        try? Data(text.utf8).write(to: URL(fileURLWithPath: path))
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        defer { close(fd) }
        return try await archive.importMessages(from: fd)
    }

    @Test("search finds every word in any case and order, diacritics folded, best first")
    func searchRanking() async throws {
        let archive = HistoryArchive(
            database: try await database([
                ("Paris is the capital of France", "France France France"),
                ("Grüße aus Köln", "Un café crème"),
                ("the cafe is closed", "nothing here"),
            ]))
        #expect(try await archive.search("france", limit: 10).map(\.text) == [
            "France France France", "Paris is the capital of France",
        ])
        #expect(try await archive.search("FRANCE capital", limit: 10).map(\.text) == ["Paris is the capital of France"])
        #expect(try await archive.search("koln GRUßE", limit: 10).map(\.text) == ["Grüße aus Köln"])
        #expect(Set(try await archive.search("CAFÉ", limit: 10).map(\.text)) == ["Un café crème", "the cafe is closed"])
        #expect(try await archive.search("france", limit: 1).map(\.text) == ["France France France"])
        let hit = try #require(try await archive.search("capital", limit: 10).first)
        #expect(hit == StoredMessage(createdAt: 1000, queryID: ":1.0/2", role: .user, text: "Paris is the capital of France"))
    }

    @Test("FTS5 syntax in a query is text; a query without words is InvalidArgs")
    func malformedQueries() async throws {
        let archive = HistoryArchive(database: try await database([("say \"hi\" AND bye", "x")]))
        for query in ["\"", "AND", "OR NOT", "NEAR(", "a*", "col:x", "(", "^", "\"hi", "-", "'", "🙂", "!!!"] {
            _ = try await archive.search(query, limit: 5)
        }
        #expect(try await archive.search("AND \"hi\"", limit: 5).map(\.text) == ["say \"hi\" AND bye"])
        for empty in ["", "   ", "\n\t"] {
            await #expect(throws: HistoryError.invalidQuery("The search has no words.")) {
                try await archive.search(empty, limit: 5)
            }
        }
    }

    @Test("export then import into a fresh state gives the same History; a second import adds nothing")
    func exportImport() async throws {
        let source = HistoryArchive(
            database: try await database([("q1 \"quoted\"\nnewline", "a1 🙂"), ("q2", "a2"), ("q3\u{1}", "a3\\")]))
        // A second, imported conversation in the source too.
        let imported = try await importText(
            #"{"created_at":5,"query_id":"old/1","role":"user","text":"older","mode":"translator","conversation":"x"}"#,
            into: source)
        #expect(imported == 1)
        let file = directory() + ".jsonl"
        try await withFile(file, O_WRONLY | O_CREAT) { try await source.export(to: $0) }
        let lines = try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 7)
        let first = try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any]
        #expect(first?["text"] as? String == "older")
        #expect(first?["mode"] as? String == "translator")
        #expect(Set(first?.keys.map { $0 } ?? []) == ["created_at", "query_id", "role", "text", "mode", "conversation"])

        let freshDatabase = try GlassdDatabase(directory: directory())
        let fresh = HistoryArchive(database: freshDatabase)
        #expect(try await withFile(file, O_RDONLY) { try await fresh.importMessages(from: $0) } == 7)
        let expected = try await source.recent(limit: 100)
        #expect(expected.count == 7)
        #expect(try await fresh.recent(limit: 100) == expected)
        #expect(try await withFile(file, O_RDONLY) { try await fresh.importMessages(from: $0) } == 0)
        #expect(try await fresh.recent(limit: 100) == expected)
        // Imported conversations are past ones: the next turn starts a conversation of its own.
        let store = SQLiteConversationStore(database: freshDatabase)
        #expect(try await store.recentMessages(limit: 10).isEmpty)
        #expect(try await fresh.search("older", limit: 5).map(\.text) == ["older"])
    }

    @Test("a bad line rejects the import with its number, and nothing of it is kept")
    func badLine() async throws {
        let archive = HistoryArchive(database: try await database([]))
        let good = #"{"created_at":1,"query_id":"q","role":"user","text":"kept?","mode":"assistant","conversation":1}"#
        let cases: [(String, HistoryError)] = [
            (good + "\n{nope\n", .badLine(2, "not valid JSON")),
            (good + "\n\n[1]\n", .badLine(3, "not a JSON object")),
            (good + "\n" + good.replacing("\"user\"", with: "\"robot\""), .badLine(2, "role must be \"user\" or \"assistant\"")),
            (good.replacing("\"created_at\":1", with: "\"created_at\":\"1\""), .badLine(1, "created_at must be an integer (unix ms)")),
            (good.replacing(",\"conversation\":1", with: ""), .badLine(1, "conversation must be an integer or a string")),
        ]
        for (text, error) in cases {
            await #expect(throws: error) { try await importText(text, into: archive) }
            #expect(try await archive.recent(limit: 10).isEmpty)
        }
        await #expect(throws: HistoryError.badLine(2, "not UTF-8")) {
            let path = directory() + ".jsonl"
            try? (Data((good + "\n").utf8) + Data([0xff, 0xfe, 0x0a])).write(to: URL(fileURLWithPath: path))
            let fd = open(path, O_RDONLY | O_CLOEXEC)
            defer { close(fd) }
            return try await archive.importMessages(from: fd)
        }
        #expect(try await archive.recent(limit: 10).isEmpty)
        #expect(try await importText(good + "\r\n", into: archive) == 1)
    }

    @Test("an import from a pipe nobody closes ends when its caller goes (the task is cancelled)")
    func cancelledImport() async throws {
        let archive = HistoryArchive(database: try await database([]))
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        defer { close(ends[0]); close(ends[1]) }
        let line = #"{"created_at":1,"query_id":"q","role":"user","text":"t","mode":"assistant","conversation":1}"# + "\n"
        try #require(line.utf8.count == line.withCString { write(ends[1], $0, strlen($0)) })
        let reader = ends[0]
        let task = Task { try await archive.importMessages(from: reader) }
        task.cancel()
        await #expect(throws: HistoryError.badDescriptor("The caller left.")) { try await task.value }
        #expect(try await archive.recent(limit: 5).isEmpty)
    }
}
