// SPDX-License-Identifier: GPL-2.0-or-later
import GRDB

/// The schema's history, append-only: each numbered migration runs once, in order, in its own
/// transaction. Never edit a shipped one; add the next.
///
/// - v1: conversations, messages, transcriptions, devices.
/// - v2: settings (key → value), for what a user sets at run time (the mode).
/// - v3: history search and import: conversations.imported (imported ones are never the current
///   conversation), indexes by time and by identity (query id, role, time), and messages_fts, an
///   FTS5 index of the text kept in step by triggers and built here for existing messages.
/// - v4: an index that finds the current conversation (the newest not imported) at once: imported
///   conversations get the highest ids, and without it every turn scanned past all of them.
/// - v5: photos: the JPEG a question from the glasses was asked about, by query id (the file is
///   in the state directory's photos folder).
/// - v6: updates: one row per firmware/FPGA update job.
/// - v7: the tokens each turn used, as the server reported them: prompt_tokens and
///   completion_tokens on the turn's assistant message (the answer is what the request
///   produced), NULL when the server reported nothing (and on user messages). Columns, not a
///   table: a turn is already its two messages, the sum over a conversation needs no join, and
///   adding a NULL column does not rewrite the table, however long the history.
/// - v8: typed answers: an answer's parts as JSON (list, table, link, place, number, text) and who
///   answered when it was not the model (`skill:time`), by query id, for AnswerOf. The turn's text
///   stays in messages, as History shows it.
/// - v9: glasses of more than one radio: devices.kind (Device1.Kind, NULL until known) and
///   device_radios, each radio of a pairing by role in the kind's order. A pairing without rows
///   there is one radio at its own address (every pairing made before v9).
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
        migrator.registerMigration("v3") { db in
            try db.execute(
                sql: """
                    ALTER TABLE conversations ADD COLUMN imported INTEGER NOT NULL DEFAULT 0;
                    CREATE INDEX messages_by_time ON messages(created_at, id);
                    CREATE INDEX messages_by_identity ON messages(query_id, role, created_at);
                    CREATE VIRTUAL TABLE messages_fts USING fts5(
                        text, content = 'messages', content_rowid = 'id',
                        tokenize = 'unicode61 remove_diacritics 2');
                    CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
                        INSERT INTO messages_fts(rowid, text) VALUES (new.id, new.text);
                    END;
                    CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
                        INSERT INTO messages_fts(messages_fts, rowid, text) VALUES ('delete', old.id, old.text);
                    END;
                    CREATE TRIGGER messages_fts_update AFTER UPDATE OF text ON messages BEGIN
                        INSERT INTO messages_fts(messages_fts, rowid, text) VALUES ('delete', old.id, old.text);
                        INSERT INTO messages_fts(rowid, text) VALUES (new.id, new.text);
                    END;
                    INSERT INTO messages_fts(messages_fts) VALUES ('rebuild');
                    """)
        }
        migrator.registerMigration("v4") { db in
            try db.execute(sql: "CREATE INDEX conversations_current ON conversations(imported, id)")
        }
        migrator.registerMigration("v5") { db in
            try db.execute(
                sql: """
                    CREATE TABLE photos (
                        query_id TEXT PRIMARY KEY NOT NULL,
                        file TEXT NOT NULL,
                        bytes INTEGER NOT NULL,
                        created_at INTEGER NOT NULL
                    );
                    CREATE INDEX photos_by_time ON photos(created_at);
                    """)
        }
        migrator.registerMigration("v6") { db in
            // One row per update job; result NULL while it runs (or when glassd stopped mid-way).
            try db.execute(
                sql: """
                    CREATE TABLE updates (
                        id INTEGER PRIMARY KEY AUTOINCREMENT,
                        device TEXT NOT NULL,
                        started_at INTEGER NOT NULL,
                        finished_at INTEGER,
                        from_versions TEXT NOT NULL,
                        to_versions TEXT NOT NULL,
                        result TEXT,
                        error TEXT NOT NULL DEFAULT '',
                        -- The firmware package while the glasses may be in their bootloader with
                        -- it half sent: a restarted glassd resumes from it. NULL otherwise.
                        firmware_package BLOB,
                        firmware_version TEXT
                    );
                    CREATE INDEX updates_by_time ON updates(started_at, id);
                    """)
        }
        migrator.registerMigration("v7") { db in
            try db.execute(
                sql: """
                    ALTER TABLE messages ADD COLUMN prompt_tokens INTEGER;
                    ALTER TABLE messages ADD COLUMN completion_tokens INTEGER;
                    """)
        }
        migrator.registerMigration("v8") { db in
            try db.execute(
                sql: """
                    CREATE TABLE typed_answers (
                        query_id TEXT PRIMARY KEY NOT NULL,
                        kind TEXT NOT NULL,
                        parts TEXT NOT NULL,
                        answered_by TEXT,
                        created_at INTEGER NOT NULL
                    );
                    """)
        }
        migrator.registerMigration("v9") { db in
            try db.execute(
                sql: """
                    ALTER TABLE devices ADD COLUMN kind TEXT;
                    CREATE TABLE device_radios (
                        device TEXT NOT NULL REFERENCES devices(address) ON DELETE CASCADE,
                        position INTEGER NOT NULL,
                        role TEXT NOT NULL,
                        address TEXT NOT NULL,
                        PRIMARY KEY (device, position)
                    );
                    """)
        }
        migrator.registerMigration("v10") { db in
            // 1: the answer is kept as far as it was spoken before the wearer cut it off.
            try db.execute(sql: "ALTER TABLE messages ADD COLUMN cut INTEGER NOT NULL DEFAULT 0")
        }
        migrator.registerMigration("v11") { db in
            // Each turn's timeline: its stages as a JSON object of name -> microseconds from its start.
            try db.execute(sql: "CREATE TABLE turn_timings (query_id TEXT PRIMARY KEY NOT NULL, at INTEGER NOT NULL, stages TEXT NOT NULL)")
            try db.execute(sql: "CREATE INDEX turn_timings_at ON turn_timings(at)")
        }
        return migrator
    }
}
