// SPDX-License-Identifier: GPL-2.0-or-later

/// The JSON body of a streamed chat completion request, written straight into bytes: a turn's
/// context can be hundreds of messages, and a general-purpose JSON round trip (building a
/// dictionary tree, then serialising it) cost more than everything else in the turn.
enum ChatRequestBody {
    /// With `includeUsage`, asks for the stream's token usage (`stream_options`, which the spec
    /// allows only with `stream: true`, as here). With `showAnswerTool`, offers the `show_answer`
    /// tool (ShowAnswerTool) with `tool_choice: auto`, so plain answers stay plain text.
    static func encode(
        model: String, messages: [ChatMessage], includeUsage: Bool = true, showAnswerTool: Bool = false
    ) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(64 + model.utf8.count + messages.reduce(0) { $0 + $1.encodedSize })
        out.append(contentsOf: #"{"messages":["#.utf8)
        for (i, message) in messages.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            out.append(contentsOf: #"{"content":"#.utf8)
            if let image = message.imageJPEG {
                // The parts array of a user message (ChatCompletionRequestUserMessageContentPart).
                out.append(contentsOf: #"[{"type":"text","text":"#.utf8)
                appendString(message.content, to: &out)
                out.append(contentsOf: #"},{"type":"image_url","image_url":{"url":"data:image/jpeg;base64,"#.utf8)
                appendBase64(image, to: &out)
                out.append(contentsOf: #""}}]"#.utf8)
            } else {
                appendString(message.content, to: &out)
            }
            out.append(contentsOf: #","role":""#.utf8)
            out.append(contentsOf: message.role.rawValue.utf8)
            out.append(contentsOf: #""}"#.utf8)
        }
        out.append(contentsOf: #"],"model":"#.utf8)
        appendString(model, to: &out)
        out.append(contentsOf: #","stream":true"#.utf8)
        if includeUsage { out.append(contentsOf: #","stream_options":{"include_usage":true}"#.utf8) }
        if showAnswerTool {
            out.append(contentsOf: #","tool_choice":"auto","tools":["#.utf8)
            out.append(contentsOf: ShowAnswerTool.definition)
            out.append(UInt8(ascii: "]"))
        }
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// A JSON string literal: quotes, backslashes and control characters escaped, the rest as UTF-8.
    /// Runs that need no escape are copied whole (most text has none).
    static func appendString(_ text: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { bytes in
            var runStart = 0
            for (i, byte) in bytes.enumerated() where needsEscape(byte) {
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<i]))
                appendEscape(byte, to: &out)
                runStart = i + 1
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart...]))
        }
        out.append(UInt8(ascii: "\""))
    }

    /// RFC 4648 base64 (standard alphabet, "=" padding), written in place: needs no JSON escape.
    static func appendBase64(_ bytes: [UInt8], to out: inout [UInt8]) {
        let start = out.count
        let length = (bytes.count + 2) / 3 * 4
        out.append(contentsOf: repeatElement(UInt8(ascii: "="), count: length))
        bytes.withUnsafeBufferPointer { input in
            out.withUnsafeMutableBufferPointer { output in
                base64Alphabet.withUnsafeBufferPointer { alphabet in
                    var i = 0
                    var o = start
                    // Whole groups of three bytes: four characters each.
                    while i + 3 <= input.count {
                        let n = UInt32(input[i]) << 16 | UInt32(input[i + 1]) << 8 | UInt32(input[i + 2])
                        output[o] = alphabet[Int(n >> 18)]
                        output[o + 1] = alphabet[Int(n >> 12 & 63)]
                        output[o + 2] = alphabet[Int(n >> 6 & 63)]
                        output[o + 3] = alphabet[Int(n & 63)]
                        i += 3
                        o += 4
                    }
                    // One or two bytes left: two or three characters, the "=" already in place.
                    let left = input.count - i
                    guard left > 0 else { return }
                    let n = UInt32(input[i]) << 16 | (left == 2 ? UInt32(input[i + 1]) << 8 : 0)
                    output[o] = alphabet[Int(n >> 18)]
                    output[o + 1] = alphabet[Int(n >> 12 & 63)]
                    if left == 2 { output[o + 2] = alphabet[Int(n >> 6 & 63)] }
                }
            }
        }
    }

    private static let base64Alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    private static func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }

    private static func appendEscape(_ byte: UInt8, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\\"))
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): out.append(byte)
        case UInt8(ascii: "\n"): out.append(UInt8(ascii: "n"))
        case UInt8(ascii: "\r"): out.append(UInt8(ascii: "r"))
        case UInt8(ascii: "\t"): out.append(UInt8(ascii: "t"))
        default:
            let hex = Array("0123456789abcdef".utf8)
            out.append(contentsOf: [UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
            out.append(contentsOf: [hex[Int(byte >> 4)], hex[Int(byte & 0xf)]])
        }
    }
}

extension ChatMessage {
    /// About what the message takes in a request (escapes aside): its text, framing, and a
    /// photo's base64 with the parts around it.
    fileprivate var encodedSize: Int { content.utf8.count + 32 + (imageJPEG.map { ($0.count + 2) / 3 * 4 + 128 } ?? 0) }
}
