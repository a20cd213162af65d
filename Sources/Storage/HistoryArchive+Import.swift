// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation
import GRDB

extension HistoryArchive {
    /// An import line longer than this is refused: no message is anywhere near it, and a line is
    /// the one thing held in memory whole.
    static let maxLineBytes = 1 << 20

    /// Reads JSON Lines from `fd` (the export's format) and adds their messages as past
    /// conversations, skipping those already stored (same query id, role and time). Returns how
    /// many were added. A bad line rejects the whole import.
    ///
    /// The lines are first staged in a scratch database beside glassd's (streamed, so memory stays
    /// flat), checked there, and only then copied in one transaction: a slow or stuck sender never
    /// holds the writer, and a bad line leaves nothing behind.
    public func importMessages(from fd: Int32) async throws(HistoryError) -> Int {
        try await DescriptorIO.with(fd) { io async throws(HistoryError) in try await importMessages(from: io) }
    }

    private func importMessages(from io: DescriptorIO) async throws(HistoryError) -> Int {
        let path = database.directory + "/" + GlassdDatabase.stagingPrefix + UUID().uuidString + ".sqlite"
        defer { unlink(path) }
        do {
            var config = Configuration()
            config.prepareDatabase { db in
                // Scratch: thrown away whatever happens, so no journal and no syncs.
                try db.execute(sql: "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF")
            }
            let staging = try DatabaseQueue(path: path, configuration: config)
            try await staging.write { [importLimit] db in try Self.stage(io, into: db, limit: importLimit) }
            try staging.close()
            return try await database.pool.writeWithoutTransaction { db in
                try db.execute(sql: "ATTACH DATABASE ? AS staging", arguments: [path])
                defer { try? db.execute(sql: "DETACH DATABASE staging") }
                var added = 0
                try db.inTransaction {
                    added = try Self.merge(db)
                    return .commit
                }
                return added
            }
        } catch let error as HistoryError {
            throw error
        } catch is CancellationError {
            throw .badDescriptor("The caller left.")
        } catch {
            throw .failed("Could not import the history: \(error)")
        }
    }

    /// Copies the lines of `io` into `lines`, checks them, and leaves their messages in `rows`,
    /// without the file's own repeats; more than `limit` bytes is refused.
    private static func stage(_ io: DescriptorIO, into db: Database, limit: Int) throws {
        try db.execute(sql: "CREATE TABLE lines (n INTEGER PRIMARY KEY, json TEXT NOT NULL)")
        let insert = try db.makeStatement(sql: "INSERT INTO lines (n, json) VALUES (?, ?)")
        var lineNumber = 0
        var pending: [UInt8] = []
        func add(_ line: ArraySlice<UInt8>) throws {
            lineNumber += 1
            let trimmed = line.last == UInt8(ascii: "\r") ? line.dropLast() : line
            if trimmed.isEmpty { return }
            guard let text = String(validating: trimmed, as: UTF8.self) else {
                throw HistoryError.badLine(lineNumber, "not UTF-8")
            }
            try insert.execute(arguments: [lineNumber, text])
        }
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 1)
        defer { chunk.deallocate() }
        var total = 0
        while true {
            let count = try io.read(into: chunk)
            if count == 0 { break }
            total += count
            guard total <= limit else {
                throw HistoryError.tooLarge(
                    "The file is larger than \(limit % (1 << 20) == 0 ? "\(limit >> 20) MiB" : "\(limit) bytes"), more than glassd imports at once; split it (by lines) and import the parts. Nothing was imported.")
            }
            var start = 0
            let bytes = UnsafeRawBufferPointer(rebasing: chunk[..<count])
            while let newline = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) {
                if pending.isEmpty {
                    try add(ArraySlice(bytes[start..<newline]))
                } else {
                    pending.append(contentsOf: bytes[start..<newline])
                    try add(pending[...])
                    pending.removeAll(keepingCapacity: true)
                }
                start = newline + 1
            }
            pending.append(contentsOf: bytes[start...])
            guard pending.count <= maxLineBytes else {
                throw HistoryError.badLine(lineNumber + 1, "longer than 1 MiB")
            }
        }
        if !pending.isEmpty { try add(pending[...]) }

        if let problem = try Row.fetchOne(db, sql: firstProblem) {
            throw HistoryError.badLine(problem[0], problem[1])
        }
        try db.execute(
            sql: """
                CREATE TABLE rows AS SELECT n,
                    json_extract(json, '$.created_at') AS created_at, json_extract(json, '$.query_id') AS query_id,
                    json_extract(json, '$.role') AS role, json_extract(json, '$.text') AS text,
                    json_extract(json, '$.mode') AS mode,
                    json_type(json, '$.conversation') || ':' || json_extract(json, '$.conversation') AS conversation
                FROM lines ORDER BY n;
                DROP TABLE lines;
                CREATE INDEX rows_identity ON rows(query_id, role, created_at, n);
                DELETE FROM rows WHERE EXISTS (
                    SELECT 1 FROM rows earlier WHERE earlier.query_id = rows.query_id AND earlier.role = rows.role
                    AND earlier.created_at = rows.created_at AND earlier.n < rows.n);
                """)
    }

    /// The first line that is not a message, and what is wrong with it.
    private static let firstProblem = """
        SELECT n, problem FROM (SELECT n, CASE
            WHEN NOT json_valid(json) THEN 'not valid JSON'
            WHEN json_type(json) != 'object' THEN 'not a JSON object'
            WHEN IFNULL(json_type(json, '$.created_at'), '') != 'integer' THEN 'created_at must be an integer (unix ms)'
            WHEN IFNULL(json_type(json, '$.query_id'), '') != 'text' THEN 'query_id must be a string'
            WHEN IFNULL(json_type(json, '$.role'), '') != 'text'
                OR json_extract(json, '$.role') NOT IN ('user', 'assistant') THEN 'role must be "user" or "assistant"'
            WHEN IFNULL(json_type(json, '$.text'), '') != 'text' THEN 'text must be a string'
            WHEN IFNULL(json_type(json, '$.mode'), '') != 'text' THEN 'mode must be a string'
            WHEN IFNULL(json_type(json, '$.conversation'), '') NOT IN ('integer', 'text')
                THEN 'conversation must be an integer or a string'
            END AS problem FROM lines)
        WHERE problem IS NOT NULL ORDER BY n LIMIT 1
        """

    /// Adds the staged messages glassd does not have yet, each staged conversation as a new past
    /// conversation, in the file's order. Runs inside the caller's transaction.
    private static func merge(_ db: Database) throws -> Int {
        try db.execute(
            sql: """
                CREATE TEMP TABLE import_new AS SELECT * FROM staging.rows r WHERE NOT EXISTS (
                    SELECT 1 FROM main.messages m
                    WHERE m.query_id = r.query_id AND m.role = r.role AND m.created_at = r.created_at)
                ORDER BY n;
                CREATE TEMP TABLE import_conversations AS
                    SELECT conversation, MIN(created_at) AS started_at FROM temp.import_new
                    GROUP BY conversation ORDER BY MIN(n);
                CREATE INDEX temp.import_conversations_key ON import_conversations(conversation);
                """)
        // Conversation ids are AUTOINCREMENT: the new ones continue after the highest ever used.
        let base =
            try Int64.fetchOne(
                db,
                sql: """
                    SELECT MAX(IFNULL((SELECT seq FROM main.sqlite_sequence WHERE name = 'conversations'), 0),
                               IFNULL((SELECT MAX(id) FROM main.conversations), 0))
                    """) ?? 0
        try db.execute(
            sql: """
                INSERT INTO main.conversations (id, started_at, imported)
                    SELECT ? + rowid, started_at, 1 FROM temp.import_conversations;
                """, arguments: [base])
        try db.execute(
            sql: """
                INSERT INTO main.messages (conversation_id, created_at, query_id, role, text, mode)
                    SELECT ? + c.rowid, n.created_at, n.query_id, n.role, n.text, n.mode
                    FROM temp.import_new n JOIN temp.import_conversations c ON c.conversation = n.conversation
                    ORDER BY n.n
                """, arguments: [base])
        let added = db.changesCount
        try db.execute(sql: "DROP TABLE temp.import_new; DROP TABLE temp.import_conversations")
        return added
    }
}
