// SPDX-License-Identifier: GPL-2.0-or-later

/// One complete D-Bus type, parsed from its signature.
indirect enum BusType: Equatable, Sendable {
    case basic(Character)
    case variant
    case array(BusType)
    case dict(BusType, BusType)
    case structure([BusType])

    static let basics: Set<Character> = ["y", "b", "n", "q", "i", "u", "x", "t", "d", "s", "o", "g", "h"]

    var signature: String {
        switch self {
        case .basic(let c): String(c)
        case .variant: "v"
        case .array(let element): "a" + element.signature
        case .dict(let key, let value): "a{" + key.signature + value.signature + "}"
        case .structure(let fields): "(" + fields.map(\.signature).joined() + ")"
        }
    }

    /// The one complete type `signature` spells, or an error saying why it is not one.
    static func parse(_ signature: String) throws(GeneratorError) -> BusType {
        var rest = Substring(signature)
        let type = try next(&rest, signature)
        guard rest.isEmpty else { throw GeneratorError("\"\(signature)\" is more than one complete type") }
        return type
    }

    /// Every complete type in `signature`, in order.
    static func parseAll(_ signature: String) throws(GeneratorError) -> [BusType] {
        var rest = Substring(signature)
        var types: [BusType] = []
        while !rest.isEmpty { types.append(try next(&rest, signature)) }
        return types
    }

    private static func next(_ rest: inout Substring, _ whole: String) throws(GeneratorError) -> BusType {
        guard let c = rest.popFirst() else { throw GeneratorError("\"\(whole)\" ends inside a type") }
        switch c {
        case _ where basics.contains(c): return .basic(c)
        case "v": return .variant
        case "a":
            if rest.first == "{" {
                rest.removeFirst()
                guard let k = rest.first, basics.contains(k) else { throw GeneratorError("\"\(whole)\": a dict key must be basic") }
                let key = try next(&rest, whole)
                let value = try next(&rest, whole)
                guard rest.popFirst() == "}" else { throw GeneratorError("\"\(whole)\": unclosed dict entry") }
                return .dict(key, value)
            }
            return .array(try next(&rest, whole))
        case "(":
            var fields: [BusType] = []
            while rest.first != ")" { fields.append(try next(&rest, whole)) }
            rest.removeFirst()
            guard !fields.isEmpty else { throw GeneratorError("\"\(whole)\": an empty struct") }
            return .structure(fields)
        default:
            throw GeneratorError("\"\(whole)\": '\(c)' is no D-Bus type")
        }
    }

    static let stringVariantDict = BusType.dict(.basic("s"), .variant)

    /// Whether Swift code gets this type as a typed value (else as a checked `DBusValue`): basic
    /// types, variants, a{sv} and arrays of those; structs and other dicts stay D-Bus values.
    var isTyped: Bool {
        switch self {
        case .basic, .variant: true
        case .array(let element): element.isTyped
        case .dict: self == Self.stringVariantDict
        case .structure: false
        }
    }

    /// Whether an a{sv} occurs in it where a named struct can stand (a{sv}, aa{sv}, …).
    var endsInVardict: Bool {
        switch self {
        case .dict: self == Self.stringVariantDict
        case .array(let element): element.endsInVardict
        default: false
        }
    }
}
