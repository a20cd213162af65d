// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation
import GRDB

/// glassd's SQLite database: WAL, foreign keys, migrated on open. A write that returned has
/// reached the WAL with a full sync, so it survives kill -9 and power loss alike.
public final class GlassdDatabase: Sendable {
    let pool: DatabasePool
    let directory: String

    /// Scratch databases of imports in progress are named so; one left by a crash is removed on open.
    static let stagingPrefix = "glassd-import-"

    /// Opens (creating if needed) `glassd.sqlite` in `directory`.
    public init(directory: String) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        self.directory = directory
        for name in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        where name.hasPrefix(Self.stagingPrefix) {
            try? FileManager.default.removeItem(atPath: directory + "/" + name)
        }
        var config = Configuration()
        config.foreignKeysEnabled = true
        config.busyMode = .timeout(5)
        pool = try DatabasePool(path: directory + "/glassd.sqlite", configuration: config)
        // GRDB sets synchronous = NORMAL on the writer when it turns WAL on, after prepareDatabase
        // has run, and NORMAL in WAL may lose acknowledged commits at a power cut. The writer is
        // one connection for the pool's life, so setting FULL on it once holds for every commit.
        try pool.writeWithoutTransaction { try $0.execute(sql: "PRAGMA synchronous = FULL") }
        try Migrations.migrator.migrate(pool)
    }

    /// `PRAGMA synchronous` as the writer connection has it (2 is FULL).
    public func writerSynchronous() throws -> Int {
        try pool.writeWithoutTransaction { try Int.fetchOne($0, sql: "PRAGMA synchronous") ?? -1 }
    }

    /// The applied migrations, oldest first.
    public func appliedMigrations() throws -> [String] {
        try pool.read { db in try Migrations.migrator.appliedMigrations(db) }
    }

    /// Proves the database answers (for the watchdog).
    public func ping() async throws {
        _ = try await pool.read { try Int.fetchOne($0, sql: "SELECT 1") }
    }
}
