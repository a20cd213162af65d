// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation
import FoundationXML
import GlassdAPI
import Testing

/// dbus/org.glassd.Manager1.xml is the contract busctl users read: it must match the live object.
@Suite("Interface file", .timeLimit(.minutes(5)))
struct InterfaceFileTests {
    @Test("the XML file matches live introspection and documents every member")
    func matchesLiveIntrospection() async throws {
        let file = try String(contentsOfFile: Paths.root + "/dbus/org.glassd.Manager1.xml", encoding: .utf8)
        let live = try await World.with { world in
            try await world.withGlassd { _ in
                try await world.busctl(["call", GlassdBus.name, GlassdBus.managerPath, "org.freedesktop.DBus.Introspectable", "Introspect"])
            }
        }
        let xml = unescapeBusctlString(live.stdout)
        let liveMembers = try interfaceMembers(xml, GlassdBus.managerInterface)
        #expect(liveMembers.count == 41)  // Notify … Glance, SetNextEvent, DisplayQueue and DisplayStats included
        // Signal arguments have no direction in the file; sd-bus leaves it out too.
        #expect(try interfaceMembers(file, GlassdBus.managerInterface) == liveMembers)

        let document = try XMLDocument(xmlString: file)
        let undocumented = try document.nodes(forXPath: "//method|//property|//signal|//arg").filter { node in
            let element = node as! XMLElement
            return !element.elements(forName: "annotation").contains {
                $0.attribute(forName: "name")?.stringValue == "org.freedesktop.DBus.DocString"
            }
        }
        #expect(undocumented.isEmpty)
        let methods = try document.nodes(forXPath: "//method") as! [XMLElement]
        for method in methods {
            #expect(method.elements(forName: "annotation").contains {
                $0.attribute(forName: "name")?.stringValue == "org.glassd.Errors"
            })
        }
    }
}

extension InterfaceFileTests {
    @Test("every org.glassd.Error name glassd has is documented in the interface files")
    func errorNamesDocumented() throws {
        let names = try String(contentsOfFile: Paths.root + "/Sources/GlassdAPI/Names.swift", encoding: .utf8)
        let declared = names.matches(of: /"(org\.glassd\.Error\.[A-Za-z]+)"/).map { String($0.1) }
        #expect(declared.count > 10)
        let documents = try ["Manager1", "Device1", "Job1", "AgentSession1"].map {
            try String(contentsOfFile: Paths.root + "/dbus/org.glassd.\($0).xml", encoding: .utf8)
        }.joined()
        for name in declared {
            #expect(documents.contains(name), "\(name) is not documented")
        }
    }
}

/// Members of `interface` in an introspection document, as comparable lines.
func interfaceMembers(_ xml: String, _ interface: String) throws -> [String] {
    let document = try XMLDocument(xmlString: xml)
    let nodes = try document.nodes(forXPath: "//interface[@name='\(interface)']/*")
    return nodes.compactMap { node -> String? in
        guard let element = node as? XMLElement, let kind = element.name, kind != "annotation" else { return nil }
        let name = element.attribute(forName: "name")?.stringValue ?? ""
        let type = element.attribute(forName: "type")?.stringValue ?? ""
        let access = element.attribute(forName: "access")?.stringValue ?? ""
        let args = element.elements(forName: "arg").map { arg in
            ["name", "type", "direction"].map { arg.attribute(forName: $0)?.stringValue ?? "" }.joined(separator: ":")
        }
        return "\(kind) \(name) \(type) \(access) \(args.joined(separator: ","))"
    }.sorted()
}

/// The text of busctl's `s "..."` output, C escapes undone.
func unescapeBusctlString(_ output: String) -> String {
    var xml = output.trimmingCharacters(in: .whitespacesAndNewlines)
    xml = String(xml.dropFirst(3).dropLast())
    return xml.replacingOccurrences(of: "\\n", with: "\n").replacingOccurrences(of: "\\\"", with: "\"")
}

extension InterfaceFileTests {
    /// Without a bus: the names code uses (GlassdAPI) and the names the files document are the
    /// same, and no daemon or glassctl source spells a member name itself.
    @Test("every member in dbus/*.xml is a GlassdAPI name and every GlassdAPI member is in the files; no source spells one itself")
    func namesFromOnePlace() throws {
        for (file, interface) in [
            ("Manager1", GlassdBus.managerInterface), ("Device1", GlassdBus.deviceInterface), ("Job1", GlassdBus.jobInterface),
            ("AgentSession1", GlassdBus.agentInterface),
        ] {
            let xml = try String(contentsOfFile: Paths.root + "/dbus/org.glassd.\(file).xml", encoding: .utf8)
            let documented = Set(try interfaceMembers(xml, interface).map { String($0.split(separator: " ")[1]) })
            #expect(documented == GlassdBus.members[interface], "\(interface)")
        }
        let sources = ["GlassdDaemon", "glassctl"].flatMap { target in
            let directory = Paths.root + "/Sources/" + target
            let files = FileManager.default.enumerator(atPath: directory)?.compactMap { $0 as? String } ?? []
            return files.filter { $0.hasSuffix(".swift") }.map { directory + "/" + $0 }
        }
        #expect(sources.count > 20)
        let names = Set(GlassdBus.members.values.joined())
        for path in sources {
            let text = try String(contentsOfFile: path, encoding: .utf8)
            // A member declared or called by a literal: .init("Name" or call("Name".
            for match in text.matches(of: /(?:\.init\(|call\(|transfer\(client, )\s*"([A-Z][A-Za-z]+)"/) {
                #expect(!names.contains(String(match.1)), "\(path) spells \(match.1) itself")
            }
        }
    }
}
