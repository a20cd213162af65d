// SPDX-License-Identifier: GPL-2.0-or-later
import GRDB

/// Settings a user changes at run time, kept across restarts.
public struct SQLiteSettingsStore: Sendable {
    private let database: GlassdDatabase

    public init(database: GlassdDatabase) {
        self.database = database
    }

    public func value(_ key: String) async throws -> String? {
        try await database.pool.read { db in
            try String.fetchOne(db, sql: "SELECT value FROM settings WHERE key = ?", arguments: [key])
        }
    }

    public func set(_ key: String, to value: String) async throws {
        try await database.pool.write { db in
            try db.execute(
                sql: "INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                arguments: [key, value])
        }
    }
}
