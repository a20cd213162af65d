// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import Foundation
import GlassdAPI
import Testing

/// What the update suites share: glassd paired to a ready virtual Monocle with a firmware
/// directory, and Manager1.Update called with options.
extension BLEWorld {
    /// The world with glassd paired to ready virtual Monocle `index`; firmware_dir is
    /// `<world>/firmware`, `extra` is added to the [update] section. `prepare` runs before
    /// pairing, with the firmware directory.
    func withUpdatableGlasses(
        _ index: Int, config extra: String = "", chunksMayDrop: Bool = false,
        prepare: (String) async throws -> Void = { _ in },
        _ body: (BusConnection, VirtualMonocle, String) async throws -> Void
    ) async throws {
        let firmwareDirectory = world.directory + "/firmware"
        try FileManager.default.createDirectory(atPath: firmwareDirectory, withIntermediateDirectories: true)
        try await prepare(firmwareDirectory)
        let config = try writeConfig()
        let text = try String(contentsOfFile: config, encoding: .utf8)
        try (text + "[update]\nfirmware_dir = \"\(firmwareDirectory)\"\n" + extra)
            .write(toFile: config, atomically: true, encoding: .utf8)
        try await withSession(index, config: config, chunksMayDrop: chunksMayDrop) { bus, vm in
            try await pairReady(index, bus)
            try await body(bus, vm, firmwareDirectory)
        }
    }

    /// A test control of the fake BlueZ (org.bluezoo.Test1), which must succeed.
    func bluezTest(_ member: String, _ signature: String, _ arguments: String...) async throws {
        let result = try await bluez(["call", "org.bluez", "/org/bluezoo", "org.bluezoo.Test1", member, signature] + arguments)
        guard result.ok else { throw TestFailure("Test1.\(member) failed: \(result.stderr)") }
    }
}

/// Manager1.Update(options): the job's path.
func startUpdate(_ bus: BusConnection, _ options: [(String, DBusValue)]) async throws -> String {
    let reply = try await bus.call(
        GlassdBus.name, path: GlassdBus.managerPath, interface: GlassdBus.managerInterface, member: GlassdBus.Method.update,
        [.dict(key: "s", value: "v", options.map { .init(.string($0.0), .variant($0.1)) })])
    return try #require(reply.first?.string)
}

/// A property of the glasses' Device1 object at `path`.
func glassesProperty(_ bus: BusConnection, _ path: String, _ name: String) async throws -> DBusValue? {
    let reply = try await bus.call(
        GlassdBus.name, path: path, interface: "org.freedesktop.DBus.Properties", member: "Get",
        [.string(GlassdBus.deviceInterface), .string(name)])
    return reply.first?.unwrapped
}
