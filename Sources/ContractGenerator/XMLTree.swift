// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation
import FoundationXML

/// An element of an introspection file: its name, attributes and child elements (text is ignored:
/// the format has none that matters).
final class XMLTree {
    let name: String
    let attributes: [String: String]
    private(set) var children: [XMLTree] = []

    init(name: String, attributes: [String: String]) {
        self.name = name
        self.attributes = attributes
    }

    func elements(_ name: String) -> [XMLTree] { children.filter { $0.name == name } }

    /// The value of the child `<annotation name=NAME value=…/>`, if there is one.
    func annotation(_ name: String) -> String? {
        elements("annotation").first { $0.attributes["name"] == name }?.attributes["value"]
    }

    func add(_ child: XMLTree) { children.append(child) }

    /// Parses `data` into its root element.
    static func parse(_ data: Data, file: String) throws(GeneratorError) -> XMLTree {
        let builder = Builder()
        let parser = XMLParser(data: data)
        parser.delegate = builder
        // FoundationXML's parser can report success for a document cut short: every element must be closed.
        guard parser.parse(), let root = builder.root, builder.complete else {
            throw GeneratorError("\(file): not well-formed XML: \(parser.parserError.map { "\($0)" } ?? "no root element, or one not closed")")
        }
        return root
    }

    private final class Builder: NSObject, XMLParserDelegate {
        var root: XMLTree?
        private var open: [XMLTree] = []
        var complete: Bool { open.isEmpty }

        func parser(
            _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
            attributes: [String: String] = [:]
        ) {
            let element = XMLTree(name: name, attributes: attributes)
            if let parent = open.last { parent.add(element) } else { root = element }
            open.append(element)
        }

        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            open.removeLast()
        }
    }
}

/// Why the contract cannot be generated: printed, and the build fails.
struct GeneratorError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
