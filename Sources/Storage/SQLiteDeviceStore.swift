// SPDX-License-Identifier: GPL-2.0-or-later
import GRDB
import LinkKit

/// The paired glasses in SQLite: at most one row of devices is the pairing (the newest), its
/// radios in device_radios.
public struct SQLiteDeviceStore: DeviceStore {
    private let database: GlassdDatabase

    public init(database: GlassdDatabase) {
        self.database = database
    }

    public func pairedGlasses() async throws -> PairedGlasses? {
        try await database.pool.read { db -> PairedGlasses? in
            guard let row = try Row.fetchOne(db, sql: "SELECT address, name, kind FROM devices ORDER BY paired_at DESC LIMIT 1"),
                let address = BluetoothAddress(row["address"])
            else { return nil }
            let radios = try Row.fetchAll(
                db, sql: "SELECT role, address FROM device_radios WHERE device = ? ORDER BY position",
                arguments: [address.description]
            ).compactMap { radio in
                BluetoothAddress(radio["address"]).map { PairedGlasses.Radio(role: radio["role"], address: $0) }
            }
            // Stored before v9 (or a radio row unreadable): the device's own address is its radio.
            guard let first = radios.first, first.address == address else {
                return PairedGlasses(address: address, name: row["name"], kind: row["kind"])
            }
            return PairedGlasses(name: row["name"], kind: row["kind"], radios: radios)
        }
    }

    public func savePaired(_ glasses: PairedGlasses, at unixMS: Int64) async throws {
        try await database.pool.write { db in
            let device = glasses.address.description
            try db.execute(
                sql: """
                    INSERT INTO devices (address, name, kind, paired_at, last_seen) VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT(address) DO UPDATE SET name = excluded.name, kind = excluded.kind,
                        paired_at = excluded.paired_at
                    """, arguments: [device, glasses.name, glasses.kind, unixMS, unixMS])
            try db.execute(sql: "DELETE FROM device_radios WHERE device = ?", arguments: [device])
            for (position, radio) in glasses.radios.enumerated() {
                try db.execute(
                    sql: "INSERT INTO device_radios (device, position, role, address) VALUES (?, ?, ?, ?)",
                    arguments: [device, position, radio.role, radio.address.description])
            }
        }
    }

    public func touch(_ address: BluetoothAddress, kind: String?, at unixMS: Int64) async throws {
        try await database.pool.write { db in
            try db.execute(
                sql: "UPDATE devices SET last_seen = ?, kind = coalesce(?, kind) WHERE address = ?",
                arguments: [unixMS, kind, address.description])
        }
    }

    public func forget(_ address: BluetoothAddress) async throws {
        try await database.pool.write { db in
            try db.execute(sql: "DELETE FROM device_radios WHERE device = ?", arguments: [address.description])
            try db.execute(sql: "DELETE FROM devices WHERE address = ?", arguments: [address.description])
        }
    }
}
