// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation
import GRDB

/// The photos questions were asked about: JPEG files in a folder of the state directory, one row
/// each in `photos` (by query id). Only the newest `keep` are kept. File work runs in the
/// database's writer (off the cooperative pool) and in step with the rows.
public struct PhotoStore: Sendable {
    private let database: GlassdDatabase
    public let directory: String
    public let keep: Int

    public init(database: GlassdDatabase, keep: Int) throws {
        self.database = database
        directory = database.directory + "/photos"
        self.keep = max(1, keep)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    /// Stores the photo of `queryID` (on disk before this returns), then removes the oldest beyond `keep`.
    public func save(queryID: String, jpeg: [UInt8], at unixMS: Int64) async throws {
        let name = Self.fileName(queryID)
        let path = directory + "/" + name
        try await database.pool.write { db in
            try Self.writeDurably(jpeg, to: path)
            try db.execute(
                sql: "INSERT OR REPLACE INTO photos (query_id, file, bytes, created_at) VALUES (?, ?, ?, ?)",
                arguments: [queryID, name, jpeg.count, unixMS])
            let old = try String.fetchAll(
                db, sql: "SELECT file FROM photos ORDER BY created_at DESC, rowid DESC LIMIT -1 OFFSET ?",
                arguments: [keep])
            try db.execute(
                sql: """
                    DELETE FROM photos WHERE rowid NOT IN
                    (SELECT rowid FROM photos ORDER BY created_at DESC, rowid DESC LIMIT ?)
                    """, arguments: [keep])
            for file in old { unlink(directory + "/" + file) }
        }
    }

    /// The stored photo of `queryID`, opened read-only (the caller closes it), or nil.
    public func open(queryID: String) async throws -> Int32? {
        let file = try await database.pool.read { db in
            try String.fetchOne(db, sql: "SELECT file FROM photos WHERE query_id = ?", arguments: [queryID])
        }
        guard let file else { return nil }
        let fd = Glibc.open(directory + "/" + file, O_RDONLY | O_CLOEXEC)
        return fd >= 0 ? fd : nil
    }

    /// Forgets every photo (the history was cleared).
    public func clear() async throws {
        try await database.pool.write { db in
            let files = try String.fetchAll(db, sql: "SELECT file FROM photos")
            try db.execute(sql: "DELETE FROM photos")
            for file in files { unlink(directory + "/" + file) }
        }
    }

    /// A file name from a query id: only letters, digits and "-" survive, so no id names a path.
    static func fileName(_ queryID: String) -> String {
        let kept = queryID.unicodeScalars.map { scalar -> Character in
            let safe = scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "-")
            return safe ? Character(scalar) : "_"
        }
        return String(kept) + ".jpg"
    }

    private static func writeDurably(_ bytes: [UInt8], to path: String) throws {
        let temporary = path + ".tmp"
        let fd = Glibc.open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        defer { close(fd) }
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + written, bytes.count - written) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            written += n
        }
        guard fsync(fd) == 0, rename(temporary, path) == 0 else {
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
    }
}
