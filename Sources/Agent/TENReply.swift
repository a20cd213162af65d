// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation

/// The server's `{"code": "<string>", "msg", "data"}` envelope, on success and on error alike
/// (it sends 400, 429 and 500 with the same JSON).
enum TENReply {
    /// A msg longer than this is cut: it ends up in a sentence on a small display.
    static let maxMessage = 300

    /// `data` of a successful reply, or the error the reply stands for.
    static func data(status: Int, body: [UInt8], server: String) throws(AgentError) -> AgentJSON {
        guard let reply = try? JSONDecoder().decode(AgentJSON.self, from: Data(body)),
            let code = reply["code"].flatMap(code)
        else {
            throw .malformed("The agent server at \(server) answered HTTP \(status) without its JSON reply.")
        }
        let message = String((reply["msg"]?.stringValue ?? "").prefix(maxMessage))
        switch code {
        case "0":
            guard (200..<300).contains(status) else {
                throw .malformed("The agent server at \(server) answered HTTP \(status) with code 0.")
            }
            return reply["data"] ?? .null
        case "10001": throw .busy(message)
        case "10003": throw .channelExists(message)
        default: throw .failed(code: code, message: message)
        }
    }

    /// The code as the string it should be; a number is taken too (the playground compares loosely).
    private static func code(_ value: AgentJSON) -> String? {
        switch value {
        case .string(let s): return s.trimmingCharacters(in: .whitespaces)
        case .integer, .number: return value.integerValue.map { String($0) }
        default: return nil
        }
    }
}
