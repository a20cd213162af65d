// SPDX-License-Identifier: GPL-2.0-or-later
import GRDB
import GlassdCore

/// Conversation history in SQLite. The newest conversation glassd started (not imported) is the
/// current one; clearing the history deletes every message.
public struct SQLiteConversationStore: ConversationStore {
    private let database: GlassdDatabase

    public init(database: GlassdDatabase) {
        self.database = database
    }

    public func recentMessages(limit: Int) async throws -> [StoredMessage] {
        try await database.pool.read { db in
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT created_at, query_id, role, text FROM messages
                    WHERE conversation_id = (SELECT MAX(id) FROM conversations WHERE imported = 0)
                    ORDER BY id DESC LIMIT ?
                    """, arguments: [max(0, limit)])
            return rows.reversed().map { row in
                StoredMessage(
                    createdAt: row["created_at"], queryID: row["query_id"],
                    role: ChatMessage.Role(rawValue: row["role"]) ?? .user, text: row["text"])
            }
        }
    }

    public func appendTurn(queryID: String, question: String, answer: String, mode: Mode, at unixMS: Int64) async throws {
        try await database.pool.write { db in
            // Cached statements: compiling the INSERT (and its FTS trigger) costs more than running it.
            var conversation = try Int64.fetchOne(
                db.cachedStatement(sql: "SELECT MAX(id) FROM conversations WHERE imported = 0"))
            if conversation == nil {
                try db.execute(sql: "INSERT INTO conversations (started_at) VALUES (?)", arguments: [unixMS])
                conversation = db.lastInsertedRowID
            }
            let insert = try db.cachedStatement(
                sql: """
                    INSERT INTO messages (conversation_id, created_at, query_id, role, text, mode)
                    VALUES (?, ?, ?, ?, ?, ?)
                    """)
            for (role, text) in [("user", question), ("assistant", answer)] {
                try insert.execute(arguments: [conversation, unixMS, queryID, role, text, mode.rawValue])
            }
        }
    }

    public func clearHistory() async throws {
        try await database.pool.write { db in
            try db.execute(sql: "DELETE FROM conversations")
        }
    }
}
