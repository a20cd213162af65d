// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation
import GRDB

/// One update as recorded.
public struct UpdateRecord: Sendable, Equatable {
    public enum Result: String, Sendable {
        case done, failed, cancelled
    }

    public var id: Int64
    public var device: String
    /// Unix time in milliseconds.
    public var startedAt: Int64
    public var fromVersions: String
    public var toVersions: String
    /// nil while the update runs, or if glassd stopped before it ended.
    public var result: Result?
    public var error: String

    public init(
        id: Int64 = 0, device: String, startedAt: Int64, fromVersions: String, toVersions: String,
        result: Result? = nil, error: String = ""
    ) {
        self.id = id
        self.device = device
        self.startedAt = startedAt
        self.fromVersions = fromVersions
        self.toVersions = toVersions
        self.result = result
        self.error = error
    }
}

/// Every update job: started, then ended with its result. A row left without a result was cut
/// short by glassd stopping.
public struct SQLiteUpdateHistory: Sendable {
    private let database: GlassdDatabase

    public init(database: GlassdDatabase) {
        self.database = database
    }

    /// Records a started update; returns its id.
    public func start(device: String, from: String, to: String, at unixMS: Int64) async throws -> Int64 {
        try await database.pool.write { db in
            try db.execute(
                sql: "INSERT INTO updates (device, started_at, from_versions, to_versions) VALUES (?, ?, ?, ?)",
                arguments: [device, unixMS, from, to])
            return db.lastInsertedRowID
        }
    }

    /// Records how an update ended, and the versions it left (`to`).
    public func finish(id: Int64, result: UpdateRecord.Result, to: String, error: String, at unixMS: Int64) async throws {
        try await database.pool.write { db in
            try db.execute(
                sql: "UPDATE updates SET result = ?, to_versions = ?, error = ?, finished_at = ? WHERE id = ?",
                arguments: [result.rawValue, to, error, unixMS, id])
        }
    }

    /// Marks updates left running by an earlier glassd as failed with `reason`; returns how many.
    @discardableResult
    public func closeInterrupted(reason: String, at unixMS: Int64) async throws -> Int {
        try await database.pool.write { db in
            try db.execute(
                sql: "UPDATE updates SET result = 'failed', error = ?, finished_at = ? WHERE result IS NULL",
                arguments: [reason, unixMS])
            return db.changesCount
        }
    }

    /// Keeps the firmware package of update `id` until `dropPackage` (durably, before the glasses
    /// are sent to their bootloader).
    public func keepPackage(id: Int64, bytes: [UInt8], version: String?) async throws {
        try await database.pool.write { db in
            try db.execute(
                sql: "UPDATE updates SET firmware_package = ?, firmware_version = ? WHERE id = ?",
                arguments: [Data(bytes), version, id])
        }
    }

    /// The glasses run their application again: no package to resume from.
    public func dropPackage() async throws {
        try await database.pool.write { db in
            try db.execute(sql: "UPDATE updates SET firmware_package = NULL WHERE firmware_package IS NOT NULL")
        }
    }

    /// Drops the packages kept for updates before `id` (a resumed update keeps its own copy).
    public func dropPackage(olderThan id: Int64) async throws {
        try await database.pool.write { db in
            try db.execute(sql: "UPDATE updates SET firmware_package = NULL WHERE id < ? AND firmware_package IS NOT NULL", arguments: [id])
        }
    }

    /// The package of an update that may have left the glasses in their bootloader, if any.
    public func pendingPackage() async throws -> (device: String, bytes: [UInt8], version: String?)? {
        try await database.pool.read { db in
            try Row.fetchOne(
                db,
                sql: """
                    SELECT device, firmware_package, firmware_version FROM updates
                    WHERE firmware_package IS NOT NULL ORDER BY id DESC LIMIT 1
                    """
            ).map { row in (row["device"], [UInt8](row["firmware_package"] as Data), row["firmware_version"]) }
        }
    }

    /// The newest `limit` updates, newest first.
    public func recent(limit: Int) async throws -> [UpdateRecord] {
        try await database.pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT id, device, started_at, from_versions, to_versions, result, error
                    FROM updates ORDER BY started_at DESC, id DESC LIMIT ?
                    """, arguments: [limit]
            ).map { row in
                UpdateRecord(
                    id: row["id"], device: row["device"], startedAt: row["started_at"], fromVersions: row["from_versions"],
                    toVersions: row["to_versions"], result: (row["result"] as String?).flatMap(UpdateRecord.Result.init),
                    error: row["error"])
            }
        }
    }
}
