// SPDX-License-Identifier: GPL-2.0-or-later

/// A struct for an a{sv} with known keys: every key optional, read with its type checked, written
/// back in the XML's order.
enum KeyedEmitter {
    /// Names the struct declares itself; no key may be spelled so in Swift.
    static let reserved: Set<String> = ["keys", "dictionary", "busValue", "assign", "others"]

    static func emit(_ name: String, doc: String?, keys: [(key: String, field: String, type: ValueType)], unknownKeys: UnknownKeys) -> String {
        let keeps = unknownKeys == .keep
        var out = Emit.doc(doc, indent: "    ")
        out += "    public struct \(name): Sendable, Equatable {\n"
        let list = keys.map { "(\(Emit.literal($0.key)), \(Emit.literal($0.type.signature)))" }.joined(separator: ", ")
        out += "        /// The keys and their types (alternatives separated by |).\n"
        out += "        public static let keys: [(key: String, signature: String)] = [\(list)]\n\n"
        for key in keys { out += "        public var \(key.field): \(Emit.swiftType(key.type))?\n" }
        if keeps { out += "        /// The keys the XML does not list, their values out of their variants.\n        public var others: [String: DBusValue] = [:]\n" }
        let parameters = (keys.map { "\($0.field): \(Emit.swiftType($0.type))? = nil" } + (keeps ? ["others: [String: DBusValue] = [:]"] : []))
            .joined(separator: ", ")
        out += "\n        public init(\(parameters)) {\n"
        for key in keys { out += "            self.\(key.field) = \(key.field)\n" }
        if keeps { out += "            self.others = others\n" }
        out += "        }\n\n"
        out += """
                    /// Reads an a{sv}, its entries in order (a value's variant taken off once); \(unknownKeys == .refuse ? "another key is an error" : keeps ? "other keys are kept in others" : "other keys are ignored").
                    public init(_ value: DBusValue, at: String = "") throws(ContractError) {
                        guard case .dict(_, _, let entries) = value else {
                            throw ContractError.wrongType(at: at, expected: "a{sv}", got: value.signature)
                        }
                        for entry in entries {
                            guard let key = entry.key.string else { continue }
                            try assign(key, entry.value)
                        }
                    }

                    /// Reads a dictionary, its keys in sorted order (a value's variant taken off once).
                    public init(from dictionary: [String: DBusValue]) throws(ContractError) {
                        for (key, value) in dictionary.sorted(by: { $0.key < $1.key }) { try assign(key, value) }
                    }

                    private mutating func assign(_ key: String, _ entry: DBusValue) throws(ContractError) {
                        let entryValue: DBusValue = if case .variant(let inner) = entry { inner } else { entry }
                        switch key {

            """
        for key in keys {
            out += "            case \(Emit.literal(key.key)): self.\(key.field) = \(Emit.decode(key.type, "entryValue", at: Emit.literal(key.key)))\n"
        }
        switch unknownKeys {
        case .refuse: out += "            default: throw ContractError.unknownKey(key, signature: entryValue.signature, allowed: Self.keys.map(\\.key))\n"
        case .keep: out += "            default: others[key] = entryValue\n"
        case .ignore: out += "            default: break\n"
        }
        out += "            }\n        }\n\n"
        out += "        /// The keys set, their values not in variants.\n"
        out += "        public var dictionary: [String: DBusValue] {\n            var out: [String: DBusValue] = [:]\n"
        if keeps { out += "            out.merge(others) { listed, _ in listed }\n" }
        for key in keys { out += "            if let v = self.\(key.field) { out[\(Emit.literal(key.key))] = \(Emit.encode(key.type, "v")) }\n" }
        out += "            return out\n        }\n\n"
        out += "        /// As an a{sv}: the keys set, in the XML's order.\n"
        out += "        public var busValue: DBusValue {\n            var entries: [DBusValue.DictEntry] = []\n"
        for key in keys {
            out += "            if let v = self.\(key.field) { entries.append(DBusValue.DictEntry(.string(\(Emit.literal(key.key))), .variant(\(Emit.encode(key.type, "v"))))) }\n"
        }
        if keeps {
            out += "            for (key, value) in others.sorted(by: { $0.key < $1.key }) where !Self.keys.contains(where: { $0.key == key }) {\n"
            out += "                entries.append(DBusValue.DictEntry(.string(key), .variant(value)))\n            }\n"
        }
        out += "            return .dict(key: \"s\", value: \"v\", entries)\n        }\n    }\n\n"
        return out
    }
}
