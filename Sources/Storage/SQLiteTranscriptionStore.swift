// SPDX-License-Identifier: GPL-2.0-or-later
import GRDB

/// What the glasses' questions were heard as: one row per transcription, written before the chat
/// request starts, marked consumed once the answer is stored.
public struct SQLiteTranscriptionStore: Sendable {
    private let database: GlassdDatabase

    public init(database: GlassdDatabase) {
        self.database = database
    }

    /// Records a transcription; `device` is kept only if it is a known device.
    public func insert(id: String, text: String, device: String?, at unixMS: Int64) async throws {
        try await database.pool.write { db in
            try db.execute(
                sql: """
                    INSERT INTO transcriptions (id, text, source_device, created_at)
                    VALUES (?, ?, (SELECT address FROM devices WHERE address = ?), ?)
                    """, arguments: [id, text, device, unixMS])
        }
    }

    public func markConsumed(id: String, at unixMS: Int64) async throws {
        try await database.pool.write { db in
            try db.execute(sql: "UPDATE transcriptions SET consumed_at = ? WHERE id = ?", arguments: [unixMS, id])
        }
    }

    /// A transcription as stored (text, device, created, consumed), or nil.
    public func transcription(id: String) async throws -> (text: String, device: String?, createdAt: Int64, consumedAt: Int64?)? {
        try await database.pool.read { db in
            try Row.fetchOne(
                db, sql: "SELECT text, source_device, created_at, consumed_at FROM transcriptions WHERE id = ?",
                arguments: [id]
            ).map { ($0["text"], $0["source_device"], $0["created_at"], $0["consumed_at"]) }
        }
    }
}
