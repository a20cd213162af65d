// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit

/// Reads DBusValues as the types the contract gives them, for the generated code: a value of
/// another type is a `ContractError`, never a default.
public enum ContractDecoding {
    public static func argument(_ values: [DBusValue], _ index: Int, at: String) throws(ContractError) -> DBusValue {
        guard values.indices.contains(index) else { throw .missingArgument(at: at) }
        return values[index]
    }

    private static func wrong(_ value: DBusValue, _ expected: String, _ at: String) -> ContractError {
        .wrongType(at: at, expected: expected, got: value.signature)
    }

    public static func byte(_ value: DBusValue, at: String) throws(ContractError) -> UInt8 {
        guard case .byte(let v) = value else { throw wrong(value, "y", at) }
        return v
    }

    public static func bool(_ value: DBusValue, at: String) throws(ContractError) -> Bool {
        guard case .bool(let v) = value else { throw wrong(value, "b", at) }
        return v
    }

    public static func int16(_ value: DBusValue, at: String) throws(ContractError) -> Int16 {
        guard case .int16(let v) = value else { throw wrong(value, "n", at) }
        return v
    }

    public static func uint16(_ value: DBusValue, at: String) throws(ContractError) -> UInt16 {
        guard case .uint16(let v) = value else { throw wrong(value, "q", at) }
        return v
    }

    public static func int32(_ value: DBusValue, at: String) throws(ContractError) -> Int32 {
        guard case .int32(let v) = value else { throw wrong(value, "i", at) }
        return v
    }

    public static func uint32(_ value: DBusValue, at: String) throws(ContractError) -> UInt32 {
        guard case .uint32(let v) = value else { throw wrong(value, "u", at) }
        return v
    }

    public static func int64(_ value: DBusValue, at: String) throws(ContractError) -> Int64 {
        guard case .int64(let v) = value else { throw wrong(value, "x", at) }
        return v
    }

    public static func uint64(_ value: DBusValue, at: String) throws(ContractError) -> UInt64 {
        guard case .uint64(let v) = value else { throw wrong(value, "t", at) }
        return v
    }

    public static func double(_ value: DBusValue, at: String) throws(ContractError) -> Double {
        guard case .double(let v) = value else { throw wrong(value, "d", at) }
        return v
    }

    public static func string(_ value: DBusValue, at: String) throws(ContractError) -> String {
        guard case .string(let v) = value else { throw wrong(value, "s", at) }
        return v
    }

    public static func objectPath(_ value: DBusValue, at: String) throws(ContractError) -> String {
        guard case .objectPath(let v) = value else { throw wrong(value, "o", at) }
        return v
    }

    public static func signature(_ value: DBusValue, at: String) throws(ContractError) -> String {
        guard case .signature(let v) = value else { throw wrong(value, "g", at) }
        return v
    }

    /// A descriptor: the holder of `value` owns it, as before.
    public static func unixFD(_ value: DBusValue, at: String) throws(ContractError) -> Int32 {
        guard case .unixFD(let v) = value else { throw wrong(value, "h", at) }
        return v
    }

    public static func bytes(_ value: DBusValue, at: String) throws(ContractError) -> [UInt8] {
        guard value.signature == "ay", let bytes = value.bytes else { throw wrong(value, "ay", at) }
        return bytes
    }

    /// An array of `element`s, each read by `each`.
    public static func array<T>(
        _ value: DBusValue, _ element: String, at: String, _ each: (DBusValue) throws(ContractError) -> T
    ) throws(ContractError) -> [T] {
        guard case .array(element, let items) = value else { throw wrong(value, "a" + element, at) }
        var out: [T] = []
        out.reserveCapacity(items.count)
        for item in items { out.append(try each(item)) }
        return out
    }

    /// An a{sv} whose keys the contract leaves open, its values as they came (in variants).
    public static func vardict(_ value: DBusValue, at: String) throws(ContractError) -> [String: DBusValue] {
        guard value.signature == "a{sv}", let keyed = value.stringKeyed else { throw wrong(value, "a{sv}", at) }
        return keyed
    }

    /// A value of one of `signatures`, as it is.
    public static func oneOf(_ value: DBusValue, _ signatures: [String], at: String) throws(ContractError) -> DBusValue {
        guard signatures.contains(value.signature) else { throw wrong(value, signatures.joined(separator: " or "), at) }
        return value
    }

    /// A value of exactly `signature` (a struct, say), as it is.
    public static func raw(_ value: DBusValue, _ signature: String, at: String) throws(ContractError) -> DBusValue {
        guard value.signature == signature else { throw wrong(value, signature, at) }
        return value
    }
}

/// A method of the contract: its name and arguments as the XML gives them (every generated
/// method enum, `GlassdBus.Manager1.Query` and the others).
public protocol ContractMethod {
    static var name: String { get }
    static var input: [(String, String)] { get }
    static var output: [(String, String)] { get }
}

extension ContractMethod {
    /// The method as exported, answered by `handler` (sd-bus has checked the input's signature).
    public static func method(_ handler: @escaping @Sendable (MethodCall) async throws -> [DBusValue]) -> InterfaceSpec.Method {
        InterfaceSpec.Method(name, input: input, output: output, handler: handler)
    }
}
