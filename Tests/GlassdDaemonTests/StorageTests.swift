// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation
import GlassdCore
import Storage
import Testing

@Suite("SQLite storage")
struct StorageTests {
    private func directory() -> String {
        NSTemporaryDirectory() + "glassd-db-\(UUID().uuidString)"
    }

    @Test("migrations apply once and the schema has WAL and foreign keys")
    func migrations() throws {
        let dir = directory()
        let database = try GlassdDatabase(directory: dir)
        #expect(try database.appliedMigrations() == ["v1", "v2", "v3"])
        #expect(try GlassdDatabase(directory: dir).appliedMigrations() == ["v1", "v2", "v3"])
        #expect(FileManager.default.fileExists(atPath: dir + "/glassd.sqlite-wal"))
    }

    @Test("the writer connection syncs fully (GRDB's WAL set-up leaves NORMAL otherwise)")
    func writerSyncsFully() throws {
        let dir = directory()
        #expect(try GlassdDatabase(directory: dir).writerSynchronous() == 2)
        #expect(try GlassdDatabase(directory: dir).writerSynchronous() == 2)
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
