// SPDX-License-Identifier: GPL-2.0-or-later

/// A value that does not have the shape the contract (dbus/*.xml) gives it.
public enum ContractError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `at` (an argument or key) has type `got`, not `expected`.
    case wrongType(at: String, expected: String, got: String)
    /// A dictionary key the contract does not list, for a dictionary that refuses others.
    case unknownKey(String, signature: String, allowed: [String])
    /// Fewer arguments than the contract has: `at` is missing.
    case missingArgument(at: String)

    public var description: String {
        switch self {
        case .wrongType(let at, let expected, let got):
            "\(at.isEmpty ? "the value" : at) has type \(got), not \(expected)"
        case .unknownKey(let key, let signature, let allowed):
            "unknown key \(key) (\(signature)); the keys are \(allowed.joined(separator: ", "))"
        case .missingArgument(let at):
            "the argument \(at) is missing"
        }
    }
}
