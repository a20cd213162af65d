// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import Foundation
import GlassdAPI
import Testing

private let ready = SystemBus.available || ProcessInfo.processInfo.environment["GLASSD_REQUIRE_POLKIT"] != nil

/// What a member of group glassd (not root) may make glassd do with its own rights, on a
/// system-like bus with the project's policy and polkit's mock.
@Suite(
    "A member's Update paths and typed questions on the glasses", .serialized, .timeLimit(.minutes(4)),
    .enabled(if: ready, "needs root, setpriv, group glassd and python3-dbusmock (Scripts/test sets them up)"))
struct SystemBusEdgeTests {
    /// Update with `firmware` as a path, by `caller` with gdbus (which prints the error's name and message).
    private func update(_ bus: SystemBus, _ caller: SystemBus.Caller, firmware: String) async throws -> CommandResult {
        try await bus.run(
            caller, "/usr/bin/gdbus",
            [
                "call", "--address", bus.address, "--dest", GlassdBus.name, "--object-path", GlassdBus.managerPath, "--method",
                GlassdBus.managerInterface + "." + GlassdBus.Method.update, "{'firmware': <'\(firmware)'>}",
            ])
    }

    private static let refusal = "org.freedesktop.DBus.Error.AccessDenied: glassd opens an image path for root only, or one under its firmware directory"

    @Test("a member allowed to update names a path outside the firmware directory: AccessDenied, the file unread; under it, or from root, the path is taken")
    func updatePaths() async throws {
        try await SystemBus.with { bus in
            try await bus.withPolkit {
                try await bus.polkit("SetAllowed", "as", ["1", GlassdBus.Action.update])
                try await bus.world.withGlassd(systemBus: bus.address) { _ in
                    // glassd's own database: readable by glassd's user only.
                    let database = bus.world.directory + "/state/glassd.sqlite"
                    let member = try await update(bus, .member, firmware: database)
                    #expect(!member.ok && member.stderr.contains(Self.refusal), "\(member.stdout) \(member.stderr)")
                    // Taken (and refused further on, for there are no glasses here).
                    let root = try await update(bus, .root, firmware: database)
                    #expect(!root.ok && root.stderr.contains("No glasses are paired"), "\(root.stderr)")
                    let firmware = bus.world.directory + "/state/firmware"
                    try FileManager.default.createDirectory(atPath: firmware, withIntermediateDirectories: true)
                    FileManager.default.createFile(atPath: firmware + "/new.zip", contents: Data("zip".utf8))
                    let inside = try await update(bus, .member, firmware: firmware + "/new.zip")
                    #expect(!inside.ok && inside.stderr.contains("No glasses are paired"), "\(inside.stderr)")
                    // Out of it again, by "..", or by a link that points out.
                    let escape = try await update(bus, .member, firmware: firmware + "/../glassd.sqlite")
                    #expect(!escape.ok && escape.stderr.contains(Self.refusal), "\(escape.stderr)")
                    try FileManager.default.createSymbolicLink(atPath: firmware + "/link.zip", withDestinationPath: database)
                    let link = try await update(bus, .member, firmware: firmware + "/link.zip")
                    #expect(!link.ok && link.stderr.contains(Self.refusal), "\(link.stderr)")
                }
            }
        }
    }

    @Test("a member's typed question is answered to it, and glassd asks polkit (no dialog) whether it may write on the glasses as Display does; root is not asked")
    func queryShownOnlyWithDisplayRight() async throws {
        try await SystemBus.with { bus in
            try await bus.withPolkit {
                try await bus.world.withGlassd(systemBus: bus.address) { _ in
                    let asked = try await bus.glassctl(.member, ["query", "hello there"])
                    #expect(asked.ok && asked.stdout.contains("echo: hello there"), "\(asked.stdout) \(asked.stderr)")
                    let checks = try await bus.checks()
                    #expect(checks.map(\.action) == [GlassdBus.Action.manage], "\(checks)")
                    #expect(checks.first?.flags == 0, "no dialog for a question: \(checks)")
                    #expect(bus.world.log().contains("typed question not shown on the glasses"))

                    let root = try await bus.glassctl(.root, ["query", "from root"])
                    #expect(root.ok && root.stdout.contains("echo: from root"), "\(root.stderr)")
                    #expect(try await bus.checks().count == 1, "root is not asked")

                    // Allowed to use Display, the member's question may show too.
                    try await bus.polkit("SetAllowed", "as", ["1", GlassdBus.Action.manage])
                    let allowed = try await bus.glassctl(.member, ["query", "allowed now"])
                    #expect(allowed.ok && allowed.stdout.contains("echo: allowed now"), "\(allowed.stderr)")
                    #expect(try await bus.checks().count == 2)
                    let notShown = bus.world.log().components(separatedBy: "typed question not shown on the glasses").count - 1
                    #expect(notShown == 1, "only the first question was kept off the glasses")
                }
            }
        }
    }
}
