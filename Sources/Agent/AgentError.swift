// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation

/// Why a request to the TEN agent server failed.
public enum AgentError: Error, Sendable, Equatable {
    /// A reply whose code is not "0": the server's code and msg.
    case failed(code: String, message: String)
    /// 10001: every worker is taken (the server's msg).
    case busy(String)
    /// 10003: an agent already runs on the channel (the server's msg).
    case channelExists(String)
    /// The server could not be reached, or did not answer in time (a sentence).
    case unreachable(String)
    /// The server answered, but not in its `{code, msg, data}` shape (a sentence).
    case malformed(String)

    /// For people: what happened, with the server's code and msg where it sent them.
    public var message: String {
        switch self {
        case .failed(let code, let message):
            return "The agent server refused (code \(code))" + Self.detail(message)
        case .busy(let message):
            return "The agent server has no free worker (code 10001)" + Self.detail(message)
        case .channelExists(let message):
            return "An agent already runs on this channel (code 10003)" + Self.detail(message)
        case .unreachable(let sentence), .malformed(let sentence):
            return sentence
        }
    }

    private static func detail(_ message: String) -> String {
        let trimmed = message.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let last = trimmed.last else { return "." }
        return ": \(trimmed)" + (".!?".contains(last) ? "" : ".")
    }
}
