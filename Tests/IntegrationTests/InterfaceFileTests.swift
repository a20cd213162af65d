// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation
import FoundationXML
import GlassdAPI
import Testing

/// dbus/org.glassd.Manager1.xml is the contract busctl users read: it must match the live object.
@Suite("Interface file")
struct InterfaceFileTests {
    /// Members of org.glassd.Manager1 in an introspection document, as comparable lines.
    private func members(_ xml: String) throws -> [String] {
        let document = try XMLDocument(xmlString: xml)
        let nodes = try document.nodes(forXPath: "//interface[@name='\(GlassdBus.managerInterface)']/*")
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

    @Test("the XML file matches live introspection and documents every member")
    func matchesLiveIntrospection() async throws {
        let file = try String(contentsOfFile: Paths.root + "/dbus/org.glassd.Manager1.xml", encoding: .utf8)
        let live = try await World.with { world in
            try await world.withGlassd { _ in
                try await world.busctl(["call", GlassdBus.name, GlassdBus.managerPath, "org.freedesktop.DBus.Introspectable", "Introspect"])
            }
        }
        // busctl prints `s "<xml>"` with C escapes.
        var xml = live.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        xml = String(xml.dropFirst(3).dropLast())
        xml = xml.replacingOccurrences(of: "\\n", with: "\n").replacingOccurrences(of: "\\\"", with: "\"")
        let liveMembers = try members(xml)
        #expect(liveMembers.count == 14)
        // Signal arguments have no direction in the file; sd-bus leaves it out too.
        #expect(try members(file) == liveMembers)

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
