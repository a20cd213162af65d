// SPDX-License-Identifier: GPL-2.0-or-later
import AssistantEngine
import GRDB
import Synchronization

/// Every stored message, past conversations and imported ones included: the last ones by time,
/// full-text search, and export as JSON Lines (HistoryArchive+Import reads them back).
public struct HistoryArchive: Sendable {
    let database: GlassdDatabase
    /// How long an export waits for its reader to take anything before it stops.
    let exportStallLimit: Duration
    /// The most bytes an import reads; a larger file is refused whole.
    let importLimit: Int
    /// Held while an export runs: it holds a database reader as long as its reader is slow, and
    /// the pool has few (GRDB's five), which questions need too.
    private let exporting = ExportSlot()

    public static let defaultExportStallLimit = Duration.seconds(60)
    /// Far above any history a person builds (a message a minute for years is well under it),
    /// and what the staging database may take on the state directory's disk.
    public static let defaultImportLimit = 256 << 20

    public init(
        database: GlassdDatabase, exportStallLimit: Duration = defaultExportStallLimit, importLimit: Int = defaultImportLimit
    ) {
        self.database = database
        self.exportStallLimit = exportStallLimit
        self.importLimit = importLimit
    }

    /// The last `limit` messages by time, oldest first.
    public func recent(limit: Int) async throws(HistoryError) -> [StoredMessage] {
        try await fetch(
            """
            SELECT created_at, query_id, role, text FROM messages
            ORDER BY created_at DESC, id DESC LIMIT ?
            """, [max(0, limit)]
        ).reversed()
    }

    /// The newest answer kept for `queryID`, nil when there is none.
    public func answerText(queryID: String) async throws(HistoryError) -> String? {
        try await fetch(
            """
            SELECT created_at, query_id, role, text FROM messages
            WHERE query_id = ? AND role = 'assistant' ORDER BY created_at DESC, id DESC LIMIT 1
            """, [queryID]
        ).first?.text
    }

    /// Whether the newest answer kept for `queryID` was cut off as it was spoken (its text is
    /// what was said).
    public func answerWasCut(queryID: String) async throws(HistoryError) -> Bool {
        do {
            return try await database.pool.read { db in
                try Bool.fetchOne(
                    db,
                    sql: "SELECT cut FROM messages WHERE query_id = ? AND role = 'assistant' ORDER BY created_at DESC, id DESC LIMIT 1",
                    arguments: [queryID]) ?? false
            }
        } catch {
            throw .failed("Could not read the history: \(error)")
        }
    }

    /// Messages holding every word of `words` (any case, any order, diacritics folded), best first.
    public func search(_ words: String, limit: Int) async throws(HistoryError) -> [StoredMessage] {
        let match = try Self.matchExpression(words)
        do {
            return try await fetch(
                """
                SELECT m.created_at, m.query_id, m.role, m.text
                FROM messages_fts JOIN messages m ON m.id = messages_fts.rowid
                WHERE messages_fts MATCH ? ORDER BY messages_fts.rank LIMIT ?
                """, [match, max(0, limit)])
        } catch .failed {
            // The expression is built to be valid; should SQLite still refuse it, the words are at fault.
            throw .invalidQuery("The search words cannot be searched for.")
        }
    }

    /// An FTS5 expression of `words`: each one quoted (so no word is an operator or syntax) and
    /// all of them required.
    static func matchExpression(_ words: String) throws(HistoryError) -> String {
        let quoted = words.split(whereSeparator: \.isWhitespace).map { word in
            "\"" + word.replacing("\"", with: "\"\"") + "\""
        }
        guard !quoted.isEmpty else { throw .invalidQuery("The search has no words.") }
        return quoted.joined(separator: " ")
    }

    /// Writes every message to `fd` as JSON Lines, oldest first, from one snapshot. One export
    /// at a time (another one is `busy`), and one whose reader takes nothing for
    /// `exportStallLimit` stops (`stalled`): a caller that never reads cannot keep a reader.
    public func export(to fd: Int32) async throws(HistoryError) {
        let free = exporting.running.withLock { running in
            defer { running = true }
            return !running
        }
        guard free else { throw .busy("Another export of the history is running; try again when it has ended.") }
        defer { exporting.running.withLock { $0 = false } }
        try await DescriptorIO.with(fd, stallLimit: exportStallLimit) { io async throws(HistoryError) in try await export(to: io) }
    }

    private func export(to io: DescriptorIO) async throws(HistoryError) {
        do {
            try await database.pool.read { db in
                let lines = try String.fetchCursor(
                    db,
                    sql: """
                        SELECT json_object('created_at', created_at, 'query_id', query_id, 'role', role,
                            'text', text, 'mode', mode, 'conversation', conversation_id)
                        FROM messages ORDER BY created_at, id
                        """)
                var buffer: [UInt8] = []
                buffer.reserveCapacity(1 << 16)
                while let line = try lines.next() {
                    buffer.append(contentsOf: line.utf8)
                    buffer.append(UInt8(ascii: "\n"))
                    if buffer.count >= 1 << 16 {
                        try io.write(buffer)
                        buffer.removeAll(keepingCapacity: true)
                    }
                }
                try io.write(buffer)
            }
        } catch let error as HistoryError {
            throw error
        } catch is CancellationError {
            throw .badDescriptor("The caller left.")
        } catch {
            throw .failed("Could not read the history: \(error)")
        }
    }

    private func fetch(_ sql: String, _ arguments: StatementArguments) async throws(HistoryError) -> [StoredMessage] {
        do {
            return try await database.pool.read { db in
                try Row.fetchAll(db, sql: sql, arguments: arguments).map { row in
                    StoredMessage(
                        createdAt: row[0], queryID: row[1], role: ChatMessage.Role(rawValue: row[2]) ?? .user,
                        text: row[3])
                }
            }
        } catch {
            throw .failed("Could not read the history: \(error)")
        }
    }
}

/// Shared by the copies of one archive: whether an export runs.
private final class ExportSlot: Sendable {
    let running = Mutex(false)
}
