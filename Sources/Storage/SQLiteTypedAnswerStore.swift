// SPDX-License-Identifier: GPL-2.0-or-later
import AnswerModel
import AssistantEngine
import GRDB

/// Typed answers by query id (Migrations, v8): the parts as JSON and who answered.
public struct SQLiteTypedAnswerStore: TypedAnswerStore {
    private let database: GlassdDatabase

    public init(database: GlassdDatabase) {
        self.database = database
    }

    public func save(queryID: String, answer: TypedAnswer, answeredBy: String?, at unixMS: Int64) async throws {
        let json = try answer.json()
        try await database.pool.write { db in
            try db.execute(
                sql: """
                    INSERT INTO typed_answers (query_id, kind, parts, answered_by, created_at) VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT(query_id) DO UPDATE SET kind = excluded.kind, parts = excluded.parts,
                        answered_by = excluded.answered_by, created_at = excluded.created_at
                    """, arguments: [queryID, answer.kind, json, answeredBy, unixMS])
        }
    }

    public func load(queryID: String) async throws -> (answer: TypedAnswer, answeredBy: String?)? {
        let row = try await database.pool.read { db in
            try Row.fetchOne(db, sql: "SELECT parts, answered_by FROM typed_answers WHERE query_id = ?", arguments: [queryID])
        }
        guard let row else { return nil }
        return (try TypedAnswer(json: row["parts"]), row["answered_by"])
    }
}
