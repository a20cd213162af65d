// SPDX-License-Identifier: GPL-2.0-or-later
import AssistantEngine
import GRDB

/// Conversation history in SQLite. The newest conversation glassd started (not imported) is the
/// current one; clearing the history deletes every message. A turn's token report is on its
/// assistant message (Migrations, v7).
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

    public func appendTurn(
        queryID: String, question: String, answer: String, mode: Mode, at unixMS: Int64, usage: TokenUsage?,
        newConversation: Bool
    ) async throws {
        try await database.pool.write { db in
            // Cached statements: compiling the INSERT (and its FTS trigger) costs more than running it.
            var conversation =
                newConversation
                ? nil : try Int64.fetchOne(db.cachedStatement(sql: "SELECT MAX(id) FROM conversations WHERE imported = 0"))
            if conversation == nil {
                // AUTOINCREMENT: above every id, imported ones too, so it is the newest not imported.
                try db.execute(sql: "INSERT INTO conversations (started_at) VALUES (?)", arguments: [unixMS])
                conversation = db.lastInsertedRowID
            }
            let insert = try db.cachedStatement(
                sql: """
                    INSERT INTO messages (conversation_id, created_at, query_id, role, text, mode, prompt_tokens,
                        completion_tokens)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    """)
            try insert.execute(arguments: [conversation, unixMS, queryID, "user", question, mode.rawValue, nil, nil])
            try insert.execute(arguments: [
                conversation, unixMS, queryID, "assistant", answer, mode.rawValue, usage?.promptTokens,
                usage?.completionTokens,
            ])
        }
    }

    public func cutAnswer(queryID: String, to text: String) async throws {
        try await database.pool.write { db in
            try db.execute(
                sql: "UPDATE messages SET text = ?, cut = 1 WHERE query_id = ? AND role = 'assistant'", arguments: [text, queryID])
        }
    }

    public func tokensUsed() async throws -> Int64 {
        try await database.pool.read { db in
            try Int64.fetchOne(
                db,
                sql: """
                    SELECT IFNULL(SUM(prompt_tokens + completion_tokens), 0) FROM messages
                    WHERE conversation_id = (SELECT MAX(id) FROM conversations WHERE imported = 0)
                    """) ?? 0
        }
    }

    public func clearHistory() async throws {
        try await database.pool.write { db in
            try db.execute(sql: "DELETE FROM conversations")
            // The answers' structures and the turns' timings go with their text.
            try db.execute(sql: "DELETE FROM typed_answers")
            try db.execute(sql: "DELETE FROM turn_timings")
        }
    }
}
