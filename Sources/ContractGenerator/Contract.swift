// SPDX-License-Identifier: GPL-2.0-or-later

/// The type of an argument, property or dictionary key: one D-Bus type, or several a key may take
/// (`s|h`); an a{sv} in it is the named struct.
struct ValueType {
    var alternatives: [BusType]
    var structName: String?

    var single: BusType? { alternatives.count == 1 ? alternatives[0] : nil }
    var signature: String { alternatives.map(\.signature).joined(separator: "|") }
}

struct Arg {
    var name: String
    var type: ValueType
    var doc: String?
}

struct Method {
    var name: String
    var doc: String?
    var input: [Arg]
    var output: [Arg]
}

struct Signal {
    var name: String
    var doc: String?
    var arguments: [Arg]
}

struct Property {
    var name: String
    var type: ValueType
    var writable: Bool
    /// `org.freedesktop.DBus.Property.EmitsChangedSignal`: true (the default), invalidates or const.
    var change: String
    var doc: String?
}

/// An a{sv} with known keys, as `org.glassd.Keys` lists them.
struct KeyedStruct {
    struct Key {
        var key: String
        var type: ValueType
    }
    var name: String
    var doc: String?
    var keys: [Key]
    /// `org.glassd.UnknownKeys`: what a key not listed is.
    var unknownKeys: UnknownKeys
    var refusesUnknown: Bool { unknownKeys == .refuse }
}

/// What a struct does with a key its XML does not list.
enum UnknownKeys: Equatable {
    case ignore
    case refuse
    /// Kept beside the listed ones (`others`), for keys the XML names in prose: a kind's components.
    case keep
}

struct Interface {
    var name: String
    var doc: String?
    var methods: [Method]
    var properties: [Property]
    var signals: [Signal]
    var structs: [KeyedStruct]

    /// The Swift namespace: the name's last component (Manager1).
    var short: String { String(name.split(separator: ".").last ?? "") }

    var members: [String] { methods.map(\.name) + properties.map(\.name) + signals.map(\.name) }
}

/// The annotations glassd's XML adds (the introspection format allows annotations on methods,
/// arguments, properties and signals):
/// - `org.glassd.Struct` on an a{sv} argument or property: the Swift struct it is read into.
/// - `org.glassd.Keys` next to it, once per struct: its keys and their types,
///   `key:TYPE, key:TYPE|TYPE, key:aa{sv}@Struct`: a D-Bus type, alternatives a key may take, or
///   an a{sv} (at any depth) that is itself a named struct.
/// - `org.glassd.UnknownKeys` next to the keys: `refuse` makes other keys an error, `keep` keeps
///   them as they are (`others`), `ignore` (the default) drops them.
enum Annotation {
    static let doc = "org.freedesktop.DBus.DocString"
    static let emits = "org.freedesktop.DBus.Property.EmitsChangedSignal"
    static let structName = "org.glassd.Struct"
    static let keys = "org.glassd.Keys"
    static let unknownKeys = "org.glassd.UnknownKeys"
}

extension Interface {
    /// Reads one `<interface>` element.
    init(_ element: XMLTree, file: String) throws(GeneratorError) {
        guard let name = element.attributes["name"] else { throw GeneratorError("\(file): an interface without a name") }
        let at = "\(file): \(name)"
        var structs: [KeyedStruct] = []
        func value(_ node: XMLTree, _ what: String) throws(GeneratorError) -> ValueType {
            guard let signature = node.attributes["type"] else { throw GeneratorError("\(at): \(what) has no type") }
            let type = try BusType.parse(signature)
            guard type.endsInVardict || type.isTyped || node.annotation(Annotation.structName) == nil else {
                throw GeneratorError("\(at): \(what) of type \(signature) cannot be a struct")
            }
            if type == BusType.stringVariantDict {
                guard let structName = node.annotation(Annotation.structName) else {
                    throw GeneratorError("\(at): \(what) is an a{sv}: name its struct (\(Annotation.structName)) and its keys")
                }
                if let keys = node.annotation(Annotation.keys) {
                    structs.append(
                        KeyedStruct(
                            name: structName, doc: node.annotation(Annotation.doc), keys: try Self.keys(keys, at: "\(at) \(what)"),
                            unknownKeys: try Self.unknownKeys(node.annotation(Annotation.unknownKeys), at: "\(at) \(what)")))
                }
                return ValueType(alternatives: [type], structName: structName)
            }
            return ValueType(alternatives: [type], structName: nil)
        }
        func args(_ node: XMLTree, _ what: String, direction: String?) throws(GeneratorError) -> [Arg] {
            var out: [Arg] = []
            for arg in node.elements("arg") where direction == nil || (arg.attributes["direction"] ?? "in") == direction {
                guard let argName = arg.attributes["name"] else { throw GeneratorError("\(at): an argument of \(what) has no name") }
                out.append(Arg(name: argName, type: try value(arg, "\(what)(\(argName))"), doc: arg.annotation(Annotation.doc)))
            }
            return out
        }
        var methods: [Method] = []
        var properties: [Property] = []
        var signals: [Signal] = []
        for child in element.children {
            guard child.name != "annotation" else { continue }
            guard let member = child.attributes["name"] else { throw GeneratorError("\(at): a \(child.name) without a name") }
            let doc = child.annotation(Annotation.doc)
            switch child.name {
            case "method":
                methods.append(
                    Method(
                        name: member, doc: doc, input: try args(child, member, direction: "in"),
                        output: try args(child, member, direction: "out")))
            case "signal":
                signals.append(Signal(name: member, doc: doc, arguments: try args(child, member, direction: nil)))
            case "property":
                let access = child.attributes["access"] ?? ""
                guard ["read", "readwrite"].contains(access) else { throw GeneratorError("\(at): \(member) has access \"\(access)\"") }
                let change = child.annotation(Annotation.emits) ?? "true"
                guard ["true", "invalidates", "const"].contains(change) else {
                    throw GeneratorError("\(at): \(member): EmitsChangedSignal \(change) is not supported")
                }
                properties.append(
                    Property(name: member, type: try value(child, member), writable: access == "readwrite", change: change, doc: doc))
            default:
                throw GeneratorError("\(at): unexpected <\(child.name)>")
            }
        }
        self.init(
            name: name, doc: element.annotation(Annotation.doc), methods: methods, properties: properties, signals: signals,
            structs: structs)
        try validate()
    }

    /// `key:TYPE, …` as `org.glassd.Keys` spells it.
    static func keys(_ text: String, at: String) throws(GeneratorError) -> [KeyedStruct.Key] {
        var keys: [KeyedStruct.Key] = []
        for item in text.split(separator: ",") {
            let parts = item.trimmingWhitespace.split(separator: ":", maxSplits: 1).map(String.init)
            guard parts.count == 2, !parts[0].isEmpty else { throw GeneratorError("\(at): \"\(item)\" is not key:TYPE") }
            let typeAndStruct = parts[1].split(separator: "@", maxSplits: 1).map(String.init)
            var alternatives: [BusType] = []
            for signature in typeAndStruct[0].split(separator: "|") { alternatives.append(try BusType.parse(String(signature))) }
            let structName = typeAndStruct.count == 2 ? typeAndStruct[1] : nil
            guard alternatives.count == 1 || (structName == nil && alternatives.allSatisfy { if case .basic = $0 { true } else { false } })
            else { throw GeneratorError("\(at): \(parts[0]): alternatives must be basic types") }
            if structName != nil, alternatives[0].endsInVardict == false {
                throw GeneratorError("\(at): \(parts[0]): only an a{sv} can be a named struct")
            }
            if structName == nil, alternatives.contains(where: \.endsInVardict) {
                throw GeneratorError("\(at): \(parts[0]): an a{sv} key needs its struct (@Name)")
            }
            guard !keys.contains(where: { $0.key == parts[0] }) else { throw GeneratorError("\(at): key \(parts[0]) twice") }
            keys.append(.init(key: parts[0], type: ValueType(alternatives: alternatives, structName: structName)))
        }
        guard !keys.isEmpty else { throw GeneratorError("\(at): no keys") }
        return keys
    }

    static func unknownKeys(_ value: String?, at: String) throws(GeneratorError) -> UnknownKeys {
        switch value {
        case nil, "ignore": return .ignore
        case "refuse": return .refuse
        case "keep": return .keep
        case let other?: throw GeneratorError("\(at): \(Annotation.unknownKeys) is refuse, keep or ignore, not \(other)")
        }
    }

    /// Unique members and Swift names; every struct named is defined once.
    func validate() throws(GeneratorError) {
        var seen = Set<String>()
        for member in members where !seen.insert(member).inserted { throw GeneratorError("\(name): \(member) twice") }
        let types = methods.map(\.name) + signals.map(\.name) + structs.map(\.name)
        var typeNames = Set(Emit.reservedTypeNames)
        for type in types where !typeNames.insert(type).inserted {
            throw GeneratorError("\(name): the Swift type \(short).\(type) would be declared twice")
        }
        var identifiers = Set<String>()
        for member in methods.map(\.name) + properties.map(\.name) where !identifiers.insert(Emit.lowerCamel(member)).inserted {
            throw GeneratorError("\(name): two members are \(Emit.lowerCamel(member)) in Swift")
        }
        let defined = Set(structs.map(\.name))
        let used = methods.flatMap { $0.input + $0.output }.map(\.type) + signals.flatMap(\.arguments).map(\.type)
            + properties.map(\.type) + structs.flatMap(\.keys).map(\.type)
        for type in used { if let s = type.structName, !defined.contains(s) { throw GeneratorError("\(name): struct \(s) has no org.glassd.Keys") } }
    }
}

extension StringProtocol {
    var trimmingWhitespace: String {
        String(drop { $0 == " " || $0 == "\n" || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\n" || $0 == "\t" }.reversed())
    }
}
