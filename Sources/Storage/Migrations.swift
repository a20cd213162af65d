// SPDX-License-Identifier: GPL-2.0-or-later
import GRDB

/// The schema's history, append-only: each numbered migration runs once, in order, in its own
/// transaction. Never edit a shipped one; add the next.
///
/// - v1: conversations, messages, transcriptions, devices.
/// - v2: settings (key → value), for what a user sets at run time (the mode).
enum Migrations {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE conversations (
                        id INTEGER PRIMARY KEY AUTOINCREMENT,
                        started_at INTEGER NOT NULL
                    );
                    CREATE TABLE messages (
                        id INTEGER PRIMARY KEY AUTOINCREMENT,
                        conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
                        created_at INTEGER NOT NULL,
                        query_id TEXT NOT NULL,
                        role TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
                        text TEXT NOT NULL,
                        mode TEXT NOT NULL
                    );
                    CREATE INDEX messages_by_conversation ON messages(conversation_id, id);
                    CREATE TABLE devices (
                        address TEXT PRIMARY KEY NOT NULL,
                        name TEXT NOT NULL DEFAULT '',
                        paired_at INTEGER NOT NULL,
                        last_seen INTEGER
                    );
                    CREATE TABLE transcriptions (
                        id TEXT PRIMARY KEY NOT NULL,
                        text TEXT NOT NULL,
                        source_device TEXT REFERENCES devices(address) ON DELETE SET NULL,
                        created_at INTEGER NOT NULL,
                        consumed_at INTEGER
                    );
                    """)
        }
        migrator.registerMigration("v2") { db in
            try db.execute(sql: "CREATE TABLE settings (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL)")
        }
        return migrator
    }
}
