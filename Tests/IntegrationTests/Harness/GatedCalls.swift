// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation
import GlassdAPI

/// One call per member glassd puts to polkit, as dbus-send or glassctl make it.
struct GatedCallRun: Sendable {
    var action: String
    var name: String
    var run: @Sendable (SystemBus, SystemBus.Caller) async throws -> CommandResult

    static let device = GlassdBus.devicePath(address: "00:00:00:00:00:03")

    /// Every gated member; ImportHistory reads `importFile` (historyFile(in:)).
    static func all(importFile: String) -> [GatedCallRun] {
        let manager = (GlassdBus.managerPath, GlassdBus.managerInterface)
        return [
            .init(action: GlassdBus.Action.pair, name: "Pair") { bus, who in try await bus.send(who, manager.0, manager.1, "Pair", ["string:"]) },
            .init(action: GlassdBus.Action.pair, name: "Unpair") { bus, who in try await bus.send(who, manager.0, manager.1, "Unpair") },
            .init(action: GlassdBus.Action.update, name: "Update") { bus, who in try await bus.glassctl(who, ["update", "--no-interactive"]) },
            .init(action: GlassdBus.Action.update, name: "Job1.Cancel") { bus, who in
                try await bus.send(who, GlassdBus.jobsPath + "/1", GlassdBus.jobInterface, GlassdBus.Job.cancel)
            },
            .init(action: GlassdBus.Action.manage, name: "Mode") { bus, who in
                try await bus.send(
                    who, manager.0, "org.freedesktop.DBus.Properties", "Set",
                    ["string:\(GlassdBus.managerInterface)", "string:Mode", "variant:string:translator"])
            },
            .init(action: GlassdBus.Action.manage, name: "ClearHistory") { bus, who in
                try await bus.send(who, manager.0, manager.1, "ClearHistory")
            },
            .init(action: GlassdBus.Action.manage, name: "ImportHistory") { bus, who in
                try await bus.glassctl(who, ["history", "--no-interactive", "--import", importFile])
            },
            .init(action: GlassdBus.Action.manage, name: "Display") { bus, who in
                try await bus.send(who, device, GlassdBus.deviceInterface, GlassdBus.DeviceMethod.display, ["string:hello"])
            },
            .init(action: GlassdBus.Action.manage, name: "StartAgent") { bus, who in
                try await bus.glassctl(who, ["agent", "start", "--no-interactive"])
            },
            .init(action: GlassdBus.Action.manage, name: "AgentSession1.Stop") { bus, who in
                try await bus.send(who, GlassdBus.agentsPath + "/1", GlassdBus.agentInterface, GlassdBus.Agent.stop)
            },
            .init(action: GlassdBus.Action.notify, name: "Glance") { bus, who in try await bus.glassctl(who, ["glance"]) },
            .init(action: GlassdBus.Action.notify, name: "CloseNotification") { bus, who in
                try await bus.send(who, manager.0, manager.1, GlassdBus.Method.closeNotification, ["uint32:1"])
            },
            .init(action: GlassdBus.Action.notify, name: "DismissNotification") { bus, who in
                try await bus.send(who, manager.0, manager.1, GlassdBus.Method.dismissNotification, ["uint32:0"])
            },
            .init(action: GlassdBus.Action.notify, name: "SetNextEvent") { bus, who in
                // dbus-send cannot write an a{sv}'s variants, and busctl hides AccessDenied's message: gdbus
                // (an empty event clears it).
                try await bus.run(
                    who, "/usr/bin/gdbus",
                    [
                        "call", "--address", bus.address, "--dest", GlassdBus.name, "--object-path", manager.0,
                        "--method", "\(manager.1).\(GlassdBus.Method.setNextEvent)", "@a{sv} {}",
                    ])
            },
        ]
    }

    /// A history file every user can read, for ImportHistory.
    static func historyFile(in world: World) throws -> String {
        let path = world.directory + "/import.jsonl"
        try #"{"role":"user","content":"imported question","at":1}"#.appending("\n").write(toFile: path, atomically: true, encoding: .utf8)
        _ = chmod(path, 0o644)
        return path
    }
}

extension CommandResult {
    /// Both streams, for error names that dbus-send prints on one and glassctl on the other.
    var output: String { stdout + stderr }
}
