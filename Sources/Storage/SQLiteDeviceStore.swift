// SPDX-License-Identifier: GPL-2.0-or-later
import GRDB
import LinkKit

/// The paired glasses in SQLite: at most one row is the pairing (the newest).
public struct SQLiteDeviceStore: DeviceStore {
    private let database: GlassdDatabase

    public init(database: GlassdDatabase) {
        self.database = database
    }

    public func pairedDevice() async throws -> (address: BluetoothAddress, name: String)? {
        let row: [String]? = try await database.pool.read { db in
            try Row.fetchOne(db, sql: "SELECT address, name FROM devices ORDER BY paired_at DESC LIMIT 1")
                .map { [$0["address"], $0["name"]] }
        }
        guard let row, let address = BluetoothAddress(row[0]) else { return nil }
        return (address, row[1])
    }

    public func savePaired(_ address: BluetoothAddress, name: String, at unixMS: Int64) async throws {
        try await database.pool.write { db in
            try db.execute(
                sql: """
                    INSERT INTO devices (address, name, paired_at, last_seen) VALUES (?, ?, ?, ?)
                    ON CONFLICT(address) DO UPDATE SET name = excluded.name, paired_at = excluded.paired_at
                    """, arguments: [address.description, name, unixMS, unixMS])
        }
    }

    public func touch(_ address: BluetoothAddress, at unixMS: Int64) async throws {
        try await database.pool.write { db in
            try db.execute(
                sql: "UPDATE devices SET last_seen = ? WHERE address = ?", arguments: [unixMS, address.description])
        }
    }

    public func forget(_ address: BluetoothAddress) async throws {
        try await database.pool.write { db in
            try db.execute(sql: "DELETE FROM devices WHERE address = ?", arguments: [address.description])
        }
    }
}
