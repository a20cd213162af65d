// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import Foundation
import FoundationXML
import GlassdAPI
import Testing

private let worldReady = BLEWorld.available || ProcessInfo.processInfo.environment["GLASSD_REQUIRE_BLE"] != nil

/// The objects glassd serves, built from the tables generated from dbus/*.xml, introspect as the
/// XML says: members, arguments, and each property's change signal (const or not).
@Suite(
    "Contract introspection", .timeLimit(.minutes(5)), .enabled(if: worldReady, "the Python test world (fake TEN server) is not set up"))
struct ContractIntrospectionTests {
    @Test("Manager1 and a live AgentSession1 introspect as their XML files say, EmitsChangedSignal included")
    func managerAndAgentSession() async throws {
        try await World.with { world in
            try await FakeTEN.with(in: world.directory) { ten in
                let config = try world.writeConfig()
                try ten.appendConfig(to: config)
                try await world.withGlassd(config: config) { _ in
                    let started = try await world.busctl(
                        ["--json=short", "call", GlassdBus.name, GlassdBus.managerPath, GlassdBus.managerInterface,
                         GlassdBus.Method.startAgent, "a{sv}", "0"])
                    try #require(started.ok, "\(started.stderr)")
                    let session = try #require(busctlString(started))
                    for (file, path, interface) in [
                        ("Manager1", GlassdBus.managerPath, GlassdBus.managerInterface),
                        ("AgentSession1", session, GlassdBus.agentInterface),
                    ] {
                        let live = try await world.busctl(
                            ["call", GlassdBus.name, path, "org.freedesktop.DBus.Introspectable", "Introspect"])
                        try #require(live.ok, "\(live.stderr)")
                        let xml = try String(contentsOfFile: Paths.root + "/dbus/org.glassd.\(file).xml", encoding: .utf8)
                        let served = try membersWithChange(unescapeBusctlString(live.stdout), interface)
                        #expect(served.count > 5)
                        #expect(try membersWithChange(xml, interface) == served, "\(file)")
                    }
                    let stopped = try await world.busctl(["call", GlassdBus.name, session, GlassdBus.agentInterface, GlassdBus.Agent.stop])
                    #expect(stopped.ok, "\(stopped.stderr)")
                }
            }
        }
    }

    /// `interfaceMembers`' lines, each property's EmitsChangedSignal added (empty: the default).
    private func membersWithChange(_ xml: String, _ interface: String) throws -> [String] {
        let document = try XMLDocument(xmlString: xml)
        let properties = try document.nodes(forXPath: "//interface[@name='\(interface)']/property") as? [XMLElement] ?? []
        let changes = properties.map { property in
            let change = property.elements(forName: "annotation").first {
                $0.attribute(forName: "name")?.stringValue == "org.freedesktop.DBus.Property.EmitsChangedSignal"
            }?.attribute(forName: "value")?.stringValue ?? ""
            return "change \(property.attribute(forName: "name")?.stringValue ?? "") \(change)"
        }
        return (try interfaceMembers(xml, interface) + changes).sorted()
    }
}
