// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation
import GRDB

/// Each turn's timeline (its stages in microseconds from its start), by query id; the newest
/// `kept` turns only.
public struct SQLiteTurnTimingStore: Sendable {
    public struct Turn: Sendable, Equatable {
        public var queryID: String
        /// Unix time in milliseconds when it was kept (the turn's end).
        public var at: Int64
        public var stages: [String: Int64]

        public init(queryID: String, at: Int64, stages: [String: Int64]) {
            self.queryID = queryID
            self.at = at
            self.stages = stages
        }
    }

    private let database: GlassdDatabase
    /// Turns kept at most: the oldest go.
    public let kept: Int
    public static let defaultKept = 1000

    public init(database: GlassdDatabase, kept: Int = defaultKept) {
        self.database = database
        self.kept = max(1, kept)
    }

    public func keep(queryID: String, at unixMS: Int64, stages: [String: Int64]) async throws {
        let json = String(decoding: try JSONSerialization.data(withJSONObject: stages, options: [.sortedKeys]), as: UTF8.self)
        try await database.pool.write { db in
            try db.execute(
                sql: "INSERT OR REPLACE INTO turn_timings (query_id, at, stages) VALUES (?, ?, ?)", arguments: [queryID, unixMS, json])
            try db.execute(
                sql: "DELETE FROM turn_timings WHERE query_id NOT IN (SELECT query_id FROM turn_timings ORDER BY at DESC LIMIT ?)",
                arguments: [kept])
        }
    }

    /// The newest `limit` turns, oldest first; a row whose stages cannot be read has none.
    public func recent(_ limit: Int) async throws -> [Turn] {
        try await database.pool.read { db in
            try Row.fetchAll(
                db, sql: "SELECT query_id, at, stages FROM turn_timings ORDER BY at DESC, rowid DESC LIMIT ?", arguments: [max(0, limit)]
            ).reversed().map(Self.turn)
        }
    }

    /// The turn of `queryID`, if its timeline is still kept.
    public func turn(queryID: String) async throws -> Turn? {
        try await database.pool.read { db in
            try Row.fetchOne(db, sql: "SELECT query_id, at, stages FROM turn_timings WHERE query_id = ?", arguments: [queryID])
                .map(Self.turn)
        }
    }

    private static func turn(_ row: Row) -> Turn {
        let text: String = row["stages"]
        let object = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:]
        let stages = object.compactMapValues { ($0 as? NSNumber)?.int64Value }
        return Turn(queryID: row["query_id"], at: row["at"], stages: stages)
    }
}
