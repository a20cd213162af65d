// SPDX-License-Identifier: GPL-2.0-or-later

/// GlassdContract's part, per interface: each method's arguments and its `InterfaceSpec.Method`,
/// each signal as a struct, the properties' specs, a struct per a{sv}, and a typed client proxy.
enum BusEmitter {
    static func emit(_ interfaces: [Interface]) -> String {
        var out = NamesEmitter.header + "import DBusKit\nimport GlassdAPI\n\n"
        for interface in interfaces {
            out += "extension GlassdBus.\(interface.short) {\n"
            out += interfaceSpec(interface)
            for method in interface.methods { out += self.method(method) }
            for signal in interface.signals { out += self.signal(signal) }
            out += propertySpecs(interface)
            for keyed in interface.structs {
                out += KeyedEmitter.emit(
                    keyed.name, doc: keyed.doc,
                    keys: keyed.keys.map { ($0.key, Emit.identifier(Emit.camel($0.key)), $0.type) },
                    unknownKeys: keyed.unknownKeys)
            }
            out += KeyedEmitter.emit(
                "Properties", doc: "\(interface.short)'s properties, as GetAll or GetManagedObjects return them.",
                keys: interface.properties.map { ($0.name, Emit.identifier(Emit.lowerCamel($0.name)), $0.type) },
                unknownKeys: .ignore)
            out += ProxyEmitter.emit(interface)
            out += "}\n\n"
        }
        return out
    }

    private static func pairs(_ args: [Arg]) -> String {
        "[" + args.map { "(\(Emit.literal($0.name)), \(Emit.literal($0.type.signature)))" }.joined(separator: ", ") + "]"
    }

    private static func interfaceSpec(_ interface: Interface) -> String {
        """
            /// Every method of the interface, for a table that must list them all.
            public static var methods: [any ContractMethod.Type] { [\(interface.methods.map { "\($0.name).self" }.joined(separator: ", "))] }

            /// Every signal of the interface, as exported.
            public static var signals: [InterfaceSpec.Signal] { [\(interface.signals.map { "\($0.name).spec" }.joined(separator: ", "))] }

            /// The interface as exported: the methods and properties given (each built from its
            /// generated description), the signals the XML lists.
            public static func spec(methods: [InterfaceSpec.Method] = [], properties: [InterfaceSpec.Property] = []) -> InterfaceSpec {
                InterfaceSpec(name: interface, methods: methods, properties: properties, signals: signals)
            }


        """
    }

    private static func method(_ method: Method) -> String {
        Emit.doc(method.doc, indent: "    ") + """
                public enum \(method.name): ContractMethod {
                    public static let name = \(Emit.literal(method.name))
                    public static let input: [(String, String)] = \(pairs(method.input))
                    public static let output: [(String, String)] = \(pairs(method.output))
                }


            """
    }

    private static func signal(_ signal: Signal) -> String {
        let fields = signal.arguments.map { (Emit.identifier(Emit.camel($0.name)), $0) }
        var out = Emit.doc(signal.doc, indent: "    ")
        out += "    public struct \(signal.name): Sendable, Equatable {\n"
        out += "        public static let name = \(Emit.literal(signal.name))\n"
        out += "        public static let arguments: [(String, String)] = \(pairs(signal.arguments))\n"
        out += "        public static var spec: InterfaceSpec.Signal { InterfaceSpec.Signal(name, arguments) }\n\n"
        for (field, arg) in fields {
            out += Emit.doc(arg.doc, indent: "        ")
            out += "        public var \(field): \(Emit.swiftType(arg.type))\n"
        }
        let parameters = fields.map { "\($0.0): \(Emit.swiftType($0.1.type))" }.joined(separator: ", ")
        out += "\n        public init(\(parameters)) {\n"
        for (field, _) in fields { out += "            self.\(field) = \(field)\n" }
        out += "        }\n\n"
        out += "        /// Reads a received signal's arguments.\n"
        out += "        public init(_ values: [DBusValue]) throws(ContractError) {\n"
        for (index, (field, arg)) in fields.enumerated() {
            let at = Emit.literal(arg.name)
            out += "            let v\(index) = try ContractDecoding.argument(values, \(index), at: \(at))\n"
            out += "            self.\(field) = \(Emit.decode(arg.type, "v\(index)", at: at))\n"
        }
        out += "        }\n\n"
        out += "        /// The arguments to emit.\n"
        out += "        public var values: [DBusValue] { [\(fields.map { Emit.encode($0.1.type, "self.\($0.0)") }.joined(separator: ", "))] }\n"
        out += "    }\n\n"
        return out
    }

    private static func propertySpecs(_ interface: Interface) -> String {
        guard !interface.properties.isEmpty else { return "" }
        func change(_ property: Property) -> String {
            switch property.change {
            case "const": ".constant"
            case "invalidates": ".invalidates"
            default: ".emits"
            }
        }
        var out = "    /// The properties as exported: type and change signal as the XML gives them.\n"
        out += "    public enum PropertySpec {\n"
        for property in interface.properties {
            let setter = property.writable ? ", setter: (@Sendable (DBusValue) throws -> Void)? = nil" : ""
            out += Emit.doc(property.doc, indent: "        ")
            out += "        public static func \(Emit.identifier(Emit.lowerCamel(property.name)))(_ value: \(Emit.swiftType(property.type))\(setter)) -> InterfaceSpec.Property {\n"
            out += "            InterfaceSpec.Property(\(Emit.literal(property.name)), \(Emit.encode(property.type, "value")), change: \(change(property))\(property.writable ? ", setter: setter" : ""))\n"
            out += "        }\n\n"
        }
        out += "        /// A read-only property by name, its value already a DBusValue; nil for a name the interface lacks.\n"
        out += "        public static func named(_ name: String, _ value: DBusValue) -> InterfaceSpec.Property? {\n"
        out += "            switch name {\n"
        for property in interface.properties where !property.writable {
            out += "            case \(Emit.literal(property.name)): InterfaceSpec.Property(name, value, change: \(change(property)))\n"
        }
        out += "            default: nil\n            }\n        }\n\n"
        out += "        /// Each property's signature.\n"
        out += "        public static let signatures: [String: String] = [\(interface.properties.map { "\(Emit.literal($0.name)): \(Emit.literal($0.type.signature))" }.joined(separator: ", "))]\n"
        out += "    }\n\n"
        return out
    }
}
