// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import Foundation
import GlassdAPI
import Testing

@Suite("State across restarts, properties", .timeLimit(.minutes(3)), .serialized)
struct StateTests {
    @Test("history survives a restart")
    func historyAcrossRestart() async throws {
        try await World.with { world in
            try await world.withGlassd { _ in
                _ = try await world.callManager("Query", "s", ["remember me"])
            }
            try await world.withGlassd { _ in
                let history = try await world.glassctl(["history", "--json"])
                let rows = try JSONSerialization.jsonObject(with: Data(history.stdout.utf8)) as? [[String: Any]]
                #expect(rows?.map { $0["text"] as? String } == ["remember me", "echo: remember me"])
            }
        }
    }

    @Test("the mode survives a restart")
    func modeAcrossRestart() async throws {
        try await World.with { world in
            try await world.withGlassd { _ in
                let set = try await world.glassctl(["mode", "translator"])
                #expect(set.stdout == "translator\n")
            }
            try await world.withGlassd { _ in
                let mode = try await world.glassctl(["mode"])
                #expect(mode.stdout == "translator\n")
            }
        }
    }

    @Test("kill -9 right after a reply keeps both turns")
    func killNineKeepsTurns() async throws {
        try await World.with { world in
            try await world.withGlassd { glassd in
                let reply = try await world.callManager("Query", "s", ["durable"])
                #expect(busctlString(reply) == "echo: durable")
                glassd.kill9()
            }
            try await world.withGlassd { _ in
                let history = try await world.glassctl(["history", "--json"])
                let rows = try JSONSerialization.jsonObject(with: Data(history.stdout.utf8)) as? [[String: Any]]
                #expect(rows?.map { $0["text"] as? String } == ["durable", "echo: durable"])
            }
        }
    }

    @Test("with a watchdog configured, glassd pings it while the core answers")
    func watchdog() async throws {
        try await World.with { world in
            try await world.withGlassd(environment: ["WATCHDOG_USEC": "400000"]) { glassd in
                #expect(await glassd.notify.wait(for: "WATCHDOG=1"))
                #expect(await glassd.notify.wait(for: "WATCHDOG=1"))
            }
        }
    }

    @Test("Mode writes emit PropertiesChanged; bad values are InvalidArgs; translator prompt is used")
    func modeProperty() async throws {
        try await World.with { world in
            try await world.withGlassd { _ in
                let bus = try await world.connect()
                let changes = try await bus.signals(SignalMatch(member: "PropertiesChanged"))
                let set = try await world.glassctl(["mode", "translator"])
                #expect(set.stdout == "translator\n")
                var changed: [String: DBusValue] = [:]
                for await signal in changes {
                    #expect(signal.arguments.first?.string == GlassdBus.managerInterface)
                    changed = signal.arguments[1].stringKeyed ?? [:]
                    break
                }
                #expect(changed["Mode"] == .variant(.string("translator")))

                do {
                    _ = try await bus.call(
                        GlassdBus.name, path: GlassdBus.managerPath, interface: "org.freedesktop.DBus.Properties",
                        member: "Set", [.string(GlassdBus.managerInterface), .string("Mode"), .variant(.string("pirate"))])
                    Issue.record("an invalid mode was accepted")
                } catch let error as BusError {
                    #expect(error.name == "org.freedesktop.DBus.Error.InvalidArgs")
                }
                let mode = try await world.glassctl(["mode"])
                #expect(mode.stdout == "translator\n")

                _ = try await world.callManager("Query", "s", ["bonjour"])
                let requests = try await world.serverRequests()
                let messages = (requests.last?["body"] as? [String: Any])?["messages"] as? [[String: Any]]
                #expect((messages?.first?["content"] as? String)?.contains("Translate") == true)
                await bus.close()
            }
        }
    }

    @Test("at the default log level, questions and answers stay out of the log")
    func bodiesOnlyAtDebug() async throws {
        try await World.with { world in
            try await world.withGlassd(logLevel: "info") { _ in
                _ = try await world.callManager("Query", "s", ["a private question"])
                let cleared = try await world.glassctl(["clear-history", "--json"])
                #expect(cleared.stdout == "{\"cleared\":true}\n")
            }
            #expect(world.log().contains("answered"))
            #expect(!world.log().contains("private question"))
        }
    }

    @Test("status, properties and the object manager answer as documented")
    func statusAndProperties() async throws {
        try await World.with { world in
            try await world.withGlassd { _ in
                let status = try await world.glassctl(["status", "--json"])
                let object = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: String]
                #expect(object?["version"] == glassdVersion)
                #expect(object?["mode"] == "assistant")
                #expect(object?["backend"] == "\(world.serverURL) fake-model")
                let managed = try await world.busctl(
                    ["call", GlassdBus.name, GlassdBus.managerPath, "org.freedesktop.DBus.ObjectManager", "GetManagedObjects"])
                #expect(managed.ok)
                // It lists the objects below the manager: no glasses known yet, so none.
                #expect(managed.stdout == "a{oa{sa{sv}}} 0\n")
                let ping = try await world.busctl(["call", GlassdBus.name, GlassdBus.managerPath, "org.freedesktop.DBus.Peer", "Ping"])
                #expect(ping.ok)
                let version = try await world.busctl(["set-property", GlassdBus.name, GlassdBus.managerPath, GlassdBus.managerInterface, "Version", "s", "9"])
                #expect(version.status == 1)
                #expect(
                    version.stderr
                        == "Failed to set property Version on interface org.glassd.Manager1: Property 'Version' is not writable.\n")
            }
        }
    }
}
