// SPDX-License-Identifier: GPL-2.0-or-later

/// A client's typed calls to one object of an interface: each method with its arguments packed
/// and its reply read, each property read (and written, where it may be).
enum ProxyEmitter {
    static func emit(_ interface: Interface) -> String {
        var out = """
                /// Calls to one object that implements \(interface.short), its arguments and replies typed.
                public struct Proxy: Sendable {
                    public let connection: BusConnection
                    public let destination: String
                    public let path: String

                    public init(_ connection: BusConnection, destination: String, path: String) {
                        self.connection = connection
                        self.destination = destination
                        self.path = path
                    }


            """
        for method in interface.methods { out += self.method(method) }
        for property in interface.properties { out += self.property(property) }
        out += """
                    /// Every property (GetAll).
                    public func properties(timeoutSeconds: Double = 25) async throws -> Properties {
                        let reply = try await connection.call(
                            destination, path: path, interface: "org.freedesktop.DBus.Properties", member: "GetAll",
                            [.string(interface)], timeoutSeconds: timeoutSeconds)
                        return try Properties(try ContractDecoding.argument(reply, 0, at: "properties"), at: "properties")
                    }

                    private func get(_ name: String) async throws -> DBusValue {
                        let reply = try await connection.call(
                            destination, path: path, interface: "org.freedesktop.DBus.Properties", member: "Get",
                            [.string(interface), .string(name)])
                        let value = try ContractDecoding.argument(reply, 0, at: name)
                        if case .variant(let inner) = value { return inner }
                        return value
                    }

                    private func set(_ name: String, _ value: DBusValue) async throws {
                        _ = try await connection.call(
                            destination, path: path, interface: "org.freedesktop.DBus.Properties", member: "Set",
                            [.string(interface), .string(name), .variant(value)])
                    }
                }

            """
        return out
    }

    private static func method(_ method: Method) -> String {
        let parameters =
            method.input.map { "\(Emit.identifier(Emit.camel($0.name))): \(Emit.swiftType($0.type))" }
            + ["timeoutSeconds: Double = 25", "sent: @Sendable (UInt64) -> Void = { _ in }"]
        let arguments = method.input.map { Emit.encode($0.type, Emit.identifier(Emit.camel($0.name))) }.joined(separator: ", ")
        let result: String
        switch method.output.count {
        case 0: result = ""
        case 1: result = " -> " + Emit.swiftType(method.output[0].type)
        default:
            result = " -> (" + method.output.map { "\(Emit.camel($0.name)): \(Emit.swiftType($0.type))" }.joined(separator: ", ") + ")"
        }
        var out = Emit.doc(method.doc, indent: "        ")
        if !method.output.isEmpty { out += "        @discardableResult\n" }
        out += "        public func \(Emit.identifier(Emit.lowerCamel(method.name)))(\(parameters.joined(separator: ", "))) async throws\(result) {\n"
        out += "            \(method.output.isEmpty ? "_" : "let reply") = try await connection.call(\n"
        out += "                destination, path: path, interface: interface, member: \(method.name).name, [\(arguments)],\n"
        out += "                timeoutSeconds: timeoutSeconds, sent: sent)\n"
        for (index, arg) in method.output.enumerated() {
            let at = Emit.literal(arg.name)
            out += "            let r\(index) = \(Emit.decode(arg.type, "try ContractDecoding.argument(reply, \(index), at: \(at))", at: at))\n"
        }
        switch method.output.count {
        case 0: break
        case 1: out += "            return r0\n"
        default: out += "            return (" + method.output.indices.map { "r\($0)" }.joined(separator: ", ") + ")\n"
        }
        out += "        }\n\n"
        return out
    }

    private static func property(_ property: Property) -> String {
        let name = Emit.lowerCamel(property.name)
        let type = Emit.swiftType(property.type)
        var out = Emit.doc(property.doc, indent: "        ")
        out += "        public var \(Emit.identifier(name)): \(type) {\n"
        out += "            get async throws { \(Emit.decode(property.type, "try await get(\(Emit.literal(property.name)))", at: Emit.literal(property.name))) }\n"
        out += "        }\n\n"
        if property.writable {
            let setter = "set" + property.name
            out += "        public func \(setter)(_ value: \(type)) async throws {\n"
            out += "            try await set(\(Emit.literal(property.name)), \(Emit.encode(property.type, "value")))\n"
            out += "        }\n\n"
        }
        return out
    }
}
