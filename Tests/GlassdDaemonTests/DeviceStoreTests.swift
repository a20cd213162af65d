// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation
import GRDB
import LinkKit
import Storage
import Testing

@Suite("Paired glasses in SQLite", .timeLimit(.minutes(2)))
struct DeviceStoreTests {
    private let dir = NSTemporaryDirectory() + "glassd-devices-\(UUID().uuidString)"
    private let left = BluetoothAddress("E0:00:00:00:00:07")!
    private let right = BluetoothAddress("E0:00:00:00:00:08")!

    @Test("glasses of two radios are kept with each radio's role, in order, and forgotten whole")
    func twoRadios() async throws {
        let database = try GlassdDatabase(directory: dir)
        let store = SQLiteDeviceStore(database: database)
        let pair = PairedGlasses(
            name: "Twin_7", kind: "twin", radios: [.init(role: "left", address: left), .init(role: "right", address: right)])
        try await store.savePaired(pair, at: 1)
        #expect(try await SQLiteDeviceStore(database: GlassdDatabase(directory: dir)).pairedGlasses() == pair)
        try await store.forget(left)
        #expect(try await store.pairedGlasses() == nil)
        let radioRows = try await DatabaseQueue(path: dir + "/glassd.sqlite").read {
            try Int.fetchOne($0, sql: "SELECT count(*) FROM device_radios")
        }
        #expect(radioRows == 0)
        _ = database
    }

    @Test("a pairing stored before radios were kept is one radio at its own address; connecting names its kind")
    func beforeRadios() async throws {
        // v8's devices table with a pairing, as every glassd before v9 left it.
        _ = try GlassdDatabase(directory: dir)
        let old = try DatabaseQueue(path: dir + "/glassd.sqlite")
        try await old.write { db in
            try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier = 'v9'")
            try db.execute(sql: "DROP TABLE device_radios")
            try db.execute(sql: "ALTER TABLE devices DROP COLUMN kind")
            try db.execute(sql: "INSERT INTO devices (address, name, paired_at) VALUES ('E0:00:00:00:00:07', 'monocle', 5)")
        }
        try old.close()
        let store = SQLiteDeviceStore(database: try GlassdDatabase(directory: dir))
        #expect(try await store.pairedGlasses() == PairedGlasses(address: left, name: "monocle", kind: nil))
        try await store.touch(left, kind: "monocle", at: 9)
        try await store.touch(left, kind: nil, at: 10)
        let paired = try await store.pairedGlasses()
        #expect(paired?.kind == "monocle")
        #expect(paired?.radios == [.init(role: PairedGlasses.soleRole, address: left)])
    }
}
