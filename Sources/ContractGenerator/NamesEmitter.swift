// SPDX-License-Identifier: GPL-2.0-or-later

/// GlassdAPI's part: every interface's name and member names, as plain strings (no D-Bus code).
enum NamesEmitter {
    static func emit(_ interfaces: [Interface]) -> String {
        var out = header
        out += "extension GlassdBus {\n"
        for interface in interfaces {
            out += Emit.doc(interface.doc, indent: "    ")
            out += "    public enum \(interface.short) {\n"
            out += "        public static let interface = \(Emit.literal(interface.name))\n"
            out += names("Method", interface.methods.map(\.name))
            out += names("Property", interface.properties.map(\.name))
            out += names("Signal", interface.signals.map(\.name))
            out += "        /// Every member, methods, properties and signals alike.\n"
            out += names("Member", interface.members)
            let all = interface.members.map(Emit.literal).joined(separator: ", ")
            out += "        public static let members: Set<String> = [\(all)]\n"
            out += "    }\n\n"
        }
        out += "    /// Every member of each interface, by interface name.\n"
        out += "    public static let members: [String: Set<String>] = [\n"
        for interface in interfaces { out += "        \(interface.short).interface: \(interface.short).members,\n" }
        out += "    ]\n}\n"
        return out
    }

    private static func names(_ kind: String, _ members: [String]) -> String {
        guard !members.isEmpty else { return "" }
        var out = "        public enum \(kind) {\n"
        for member in members {
            out += "            public static let \(Emit.identifier(Emit.lowerCamel(member))) = \(Emit.literal(member))\n"
        }
        return out + "        }\n"
    }

    static let header = """
        // Generated from dbus/*.xml by ContractGenerator (ContractPlugin runs it at every build): do not edit.

        """
}
