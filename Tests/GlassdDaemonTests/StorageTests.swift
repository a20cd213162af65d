// SPDX-License-Identifier: GPL-2.0-or-later
import AssistantEngine
import Foundation
import GRDB
import Storage
import Testing

@Suite("SQLite storage", .timeLimit(.minutes(5)))
struct StorageTests {
    private func directory() -> String {
        NSTemporaryDirectory() + "glassd-db-\(UUID().uuidString)"
    }

    @Test("migrations apply once and the schema has WAL and foreign keys")
    func migrations() throws {
        let dir = directory()
        let database = try GlassdDatabase(directory: dir)
        #expect(try database.appliedMigrations() == ["v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10", "v11"])
        #expect(try GlassdDatabase(directory: dir).appliedMigrations() == ["v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10", "v11"])
        #expect(FileManager.default.fileExists(atPath: dir + "/glassd.sqlite-wal"))
    }

    @Test("updates are recorded newest first; one left running by a stopped glassd is closed as failed")
    func updateHistory() async throws {
        let dir = directory()
        let history = SQLiteUpdateHistory(database: try GlassdDatabase(directory: dir))
        let first = try await history.start(device: "A", from: "firmware v1, fpga v1", to: "firmware v2, fpga v1", at: 1000)
        try await history.finish(id: first, result: .done, to: "firmware v2, fpga v1", error: "", at: 2000)
        _ = try await history.start(device: "A", from: "firmware v2, fpga v1", to: "firmware v2, fpga v3", at: 3000)
        // A new glassd on the same database: the second never ended.
        let again = SQLiteUpdateHistory(database: try GlassdDatabase(directory: dir))
        #expect(try await again.recent(limit: 10).first?.result == nil)
        #expect(try await again.closeInterrupted(reason: "glassd stopped", at: 4000) == 1)
        let records = try await again.recent(limit: 10)
        #expect(records.map(\.startedAt) == [3000, 1000])
        #expect(records.map(\.result) == [.failed, .done])
        #expect(records.first?.error == "glassd stopped")
        #expect(records.last?.toVersions == "firmware v2, fpga v1")
        #expect(try await again.recent(limit: 1).count == 1)
    }

    @Test("the writer connection syncs fully (GRDB's WAL set-up leaves NORMAL otherwise)")
    func writerSyncsFully() throws {
        let dir = directory()
        #expect(try GlassdDatabase(directory: dir).writerSynchronous() == 2)
        #expect(try GlassdDatabase(directory: dir).writerSynchronous() == 2)
    }

    @Test("each turn's timings: kept by query id (again: replaced), read back newest last, bounded to the newest (here 5), kept across a reopen")
    func turnTimings() async throws {
        let dir = directory()
        let store = SQLiteTurnTimingStore(database: try GlassdDatabase(directory: dir), kept: 5)
        try await store.keep(queryID: "a", at: 10, stages: ["speech_end": 1_200_000, "transcript": 1_500_000])
        try await store.keep(queryID: "b", at: 20, stages: [:])
        try await store.keep(queryID: "a", at: 30, stages: ["first_word": 9])
        #expect(try await store.recent(5) == [
            .init(queryID: "b", at: 20, stages: [:]), .init(queryID: "a", at: 30, stages: ["first_word": 9]),
        ])
        for n in 0..<7 { try await store.keep(queryID: "t\(n)", at: Int64(100 + n), stages: ["transcript": Int64(n)]) }
        let again = SQLiteTurnTimingStore(database: try GlassdDatabase(directory: dir), kept: 5)
        let all = try await again.recent(5_000)
        #expect(all.map(\.queryID) == ["t2", "t3", "t4", "t5", "t6"])
        #expect(try await again.recent(1).first?.stages == ["transcript": 6])
        // One turn by its query id; one no longer kept is none.
        #expect(try await again.turn(queryID: "t4") == .init(queryID: "t4", at: 104, stages: ["transcript": 4]))
        #expect(try await again.turn(queryID: "a") == nil)
        #expect(SQLiteTurnTimingStore(database: try GlassdDatabase(directory: dir)).kept == 1000)
    }

    @Test("turns are stored in order, survive reopening, and clear")
    func turns() async throws {
        let dir = directory()
        do {
            let store = SQLiteConversationStore(database: try GlassdDatabase(directory: dir))
            try await store.appendTurn(queryID: "a", question: "q1", answer: "a1", mode: .assistant, at: 1)
            try await store.appendTurn(queryID: "b", question: "q2", answer: "a2", mode: .translator, at: 2)
        }
        let store = SQLiteConversationStore(database: try GlassdDatabase(directory: dir))
        let all = try await store.recentMessages(limit: 10)
        #expect(all.map(\.text) == ["q1", "a1", "q2", "a2"])
        #expect(all.map(\.role) == [.user, .assistant, .user, .assistant])
        #expect(all.map(\.queryID) == ["a", "a", "b", "b"])
        #expect(try await store.recentMessages(limit: 3).map(\.text) == ["a1", "q2", "a2"])
        #expect(try await store.recentMessages(limit: 0).isEmpty)
        try await store.clearHistory()
        #expect(try await store.recentMessages(limit: 10).isEmpty)
        try await store.appendTurn(queryID: "c", question: "q3", answer: "a3", mode: .assistant, at: 3)
        #expect(try await store.recentMessages(limit: 10).map(\.text) == ["q3", "a3"])
    }

    @Test("any text round-trips, quotes and newlines and emoji included")
    func anyText() async throws {
        let store = SQLiteConversationStore(database: try GlassdDatabase(directory: directory()))
        // (NUL cannot arrive: D-Bus strings exclude it and the decoder drops it from answers.)
        let odd = "it's \"quoted\"\n; DROP TABLE messages; -- 🙂 \t end"
        try await store.appendTurn(queryID: "x", question: odd, answer: odd, mode: .assistant, at: 1)
        #expect(try await store.recentMessages(limit: 2).map(\.text) == [odd, odd])
    }
}

@Suite("SQLite migrations of existing databases", .timeLimit(.minutes(5)))
struct MigrationTests {
    @Test("a database from before v3 gets its messages indexed for search, and keeps its conversation")
    func v2ToV3() async throws {
        let dir = NSTemporaryDirectory() + "glassd-db-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        // The v1 and v2 schema as glassd 0.1 created it, with GRDB's record of both migrations.
        let old = try DatabaseQueue(path: dir + "/glassd.sqlite")
        try await old.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
                    INSERT INTO grdb_migrations VALUES ('v1'), ('v2');
                    CREATE TABLE conversations (id INTEGER PRIMARY KEY AUTOINCREMENT, started_at INTEGER NOT NULL);
                    CREATE TABLE messages (
                        id INTEGER PRIMARY KEY AUTOINCREMENT,
                        conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
                        created_at INTEGER NOT NULL, query_id TEXT NOT NULL,
                        role TEXT NOT NULL CHECK (role IN ('user', 'assistant')), text TEXT NOT NULL, mode TEXT NOT NULL);
                    CREATE INDEX messages_by_conversation ON messages(conversation_id, id);
                    CREATE TABLE devices (address TEXT PRIMARY KEY NOT NULL, name TEXT NOT NULL DEFAULT '',
                        paired_at INTEGER NOT NULL, last_seen INTEGER);
                    CREATE TABLE transcriptions (id TEXT PRIMARY KEY NOT NULL, text TEXT NOT NULL,
                        source_device TEXT REFERENCES devices(address) ON DELETE SET NULL,
                        created_at INTEGER NOT NULL, consumed_at INTEGER);
                    CREATE TABLE settings (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL);
                    INSERT INTO conversations (started_at) VALUES (1);
                    INSERT INTO messages (conversation_id, created_at, query_id, role, text, mode)
                        VALUES (1, 1, 'a', 'user', 'Où est la bibliothèque ?', 'translator'),
                               (1, 1, 'a', 'assistant', 'Where is the library?', 'translator');
                    """)
        }
        try old.close()
        let database = try GlassdDatabase(directory: dir)
        #expect(try database.appliedMigrations() == ["v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10", "v11"])
        #expect(try await HistoryArchive(database: database).search("BIBLIOTHEQUE ou", limit: 5).map(\.text) == [
            "Où est la bibliothèque ?"
        ])
        #expect(try await SQLiteConversationStore(database: database).recentMessages(limit: 5).count == 2)
    }
}
