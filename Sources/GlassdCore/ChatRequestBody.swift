// SPDX-License-Identifier: GPL-2.0-or-later

/// The JSON body of a streamed chat completion request, written straight into bytes: a turn's
/// context can be hundreds of messages, and a general-purpose JSON round trip (building a
/// dictionary tree, then serialising it) cost more than everything else in the turn.
enum ChatRequestBody {
    static func encode(model: String, messages: [ChatMessage]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(64 + model.utf8.count + messages.reduce(0) { $0 + $1.content.utf8.count + 32 })
        out.append(contentsOf: #"{"messages":["#.utf8)
        for (i, message) in messages.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            out.append(contentsOf: #"{"content":"#.utf8)
            appendString(message.content, to: &out)
            out.append(contentsOf: #","role":""#.utf8)
            out.append(contentsOf: message.role.rawValue.utf8)
            out.append(contentsOf: #""}"#.utf8)
        }
        out.append(contentsOf: #"],"model":"#.utf8)
        appendString(model, to: &out)
        out.append(contentsOf: #","stream":true}"#.utf8)
        return out
    }

    /// A JSON string literal: quotes, backslashes and control characters escaped, the rest as UTF-8.
    static func appendString(_ text: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case UInt8(ascii: "\n"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case UInt8(ascii: "\r"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case UInt8(ascii: "\t"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
                out.append(contentsOf: [hex[Int(byte >> 4)], hex[Int(byte & 0xf)]])
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
