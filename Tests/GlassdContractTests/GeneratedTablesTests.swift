// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import Foundation
import FoundationXML
import GlassdAPI
import GlassdContract
import Testing

/// The generated tables say what dbus/*.xml says, read here by another parser (FoundationXML's
/// XMLDocument, not the generator's own reader).
@Suite("Generated contract tables", .timeLimit(.minutes(5)))
struct GeneratedTablesTests {
    private static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    /// (interface, its generated spec with every method and property the XML lists).
    private func specs() -> [(String, InterfaceSpec)] {
        func methods(_ types: [any ContractMethod.Type]) -> [InterfaceSpec.Method] { types.map { $0.method { _ in [] } } }
        typealias M = GlassdBus.Manager1
        let manager = M.spec(
            methods: methods(M.methods),
            properties: [
                M.PropertySpec.version(""), M.PropertySpec.mode("") { _ in }, M.PropertySpec.backend(""), M.PropertySpec.privacy(""),
                M.PropertySpec.tokensUsed(0), M.PropertySpec.pairedDevice("/"), M.PropertySpec.state(""),
                M.PropertySpec.agents([]), M.PropertySpec.wake(.init()), M.PropertySpec.displayQueue(.array(element: "(ssb)", [])),
                M.PropertySpec.displayStats(.init()),
            ])
        typealias D = GlassdBus.Device1
        let device = D.spec(
            methods: methods(D.methods),
            properties: D.PropertySpec.signatures.keys.sorted().compactMap { name in
                D.PropertySpec.named(name, Self.sample(D.PropertySpec.signatures[name]!))
            })
        typealias J = GlassdBus.Job1
        let job = J.spec(
            methods: methods(J.methods),
            properties: [J.PropertySpec.status(""), J.PropertySpec.percentage(0), J.PropertySpec.error("")])
        typealias A = GlassdBus.AgentSession1
        let agent = A.spec(
            methods: methods(A.methods),
            properties: [A.PropertySpec.state(""), A.PropertySpec.graph(""), A.PropertySpec.channel(""), A.PropertySpec.error("")])
        return [("Manager1", manager), ("Device1", device), ("Job1", job), ("AgentSession1", agent)]
    }

    private static func sample(_ signature: String) -> DBusValue {
        switch signature {
        case "s": .string("")
        case "n": .int16(0)
        case "b": .bool(false)
        case "y": .byte(0)
        case "u": .uint32(0)
        case "t": .uint64(0)
        case "a{ss}": .dict(key: "s", value: "s", [])
        case "a(sss)": .array(element: "(sss)", [])
        default: .variant(.string(signature))
        }
    }

    @Test("every method, signal and property, with its arguments' names and types and its change signal, is the XML's")
    func tablesMatchXML() throws {
        for (file, spec) in specs() {
            let xml = try String(contentsOfFile: Self.root + "/dbus/org.glassd.\(file).xml", encoding: .utf8)
            #expect(try lines(xml, spec.name) == lines(spec), "\(file)")
            #expect(GlassdBus.members[spec.name] == Set(try lines(xml, spec.name).map { String($0.split(separator: " ")[1]) }))
        }
    }

    /// The spec's members as comparable lines.
    private func lines(_ spec: InterfaceSpec) -> [String] {
        func args(_ list: [(name: String, signature: String)], _ direction: String) -> [String] {
            list.map { "\($0.name):\($0.signature):\(direction)" }
        }
        let change: (InterfaceSpec.Property.Change) -> String = {
            switch $0 {
            case .constant: "const"
            case .invalidates: "invalidates"
            case .emits: ""
            }
        }
        return (spec.methods.map { "method \($0.name) \((args($0.input, "in") + args($0.output, "out")).joined(separator: ","))" }
            + spec.signals.map { "signal \($0.name) \(args($0.arguments, "").joined(separator: ","))" }
            + spec.properties.map { "property \($0.name) \($0.signature) \($0.setter == nil ? "read" : "readwrite") \(change($0.change))" })
            .sorted()
    }

    /// The XML's members of `interface` as the same lines.
    private func lines(_ xml: String, _ interface: String) throws -> [String] {
        let document = try XMLDocument(xmlString: xml)
        let nodes = try document.nodes(forXPath: "//interface[@name='\(interface)']/*")
        return nodes.compactMap { node -> String? in
            guard let element = node as? XMLElement, let kind = element.name, kind != "annotation" else { return nil }
            func attribute(_ e: XMLElement, _ name: String) -> String { e.attribute(forName: name)?.stringValue ?? "" }
            let name = attribute(element, "name")
            let args = element.elements(forName: "arg").map { arg in
                let direction = kind == "method" ? (arg.attribute(forName: "direction")?.stringValue ?? "in") : ""
                return "\(attribute(arg, "name")):\(attribute(arg, "type")):\(direction)"
            }
            // Inputs before outputs, as the spec keeps them (the files list them so too).
            let ordered = args.filter { $0.hasSuffix(":in") } + args.filter { !$0.hasSuffix(":in") }
            switch kind {
            case "property":
                let change = element.elements(forName: "annotation").first {
                    attribute($0, "name") == "org.freedesktop.DBus.Property.EmitsChangedSignal"
                }.map { attribute($0, "value") } ?? ""
                return "property \(name) \(attribute(element, "type")) \(attribute(element, "access")) \(change)"
            default:
                return "\(kind) \(name) \(ordered.joined(separator: ","))"
            }
        }.sorted()
    }
}
