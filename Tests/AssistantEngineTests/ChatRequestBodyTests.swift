// SPDX-License-Identifier: GPL-2.0-or-later
@testable import AssistantEngine
import Foundation
import Testing

@Suite("Chat request body", .timeLimit(.minutes(5)))
struct ChatRequestBodyTests {
    @Test("any text survives the hand-written JSON, as a JSON parser reads it")
    func roundTrips() throws {
        let odd = "quote \" backslash \\ slash / newline \n cr \r tab \t bell \u{7} nul \u{0} del \u{7f} é 🙂 \u{2028}"
        let messages = [ChatMessage(.system, "be brief"), ChatMessage(.user, odd), ChatMessage(.assistant, ""),
            ChatMessage(.user, "\"\n\\")]
        let body = ChatRequestBody.encode(model: "m\"odel", messages: messages)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])
        #expect(object["model"] as? String == "m\"odel")
        #expect(object["stream"] as? Bool == true)
        let sent = try #require(object["messages"] as? [[String: String]])
        #expect(sent.map { $0["role"] } == ["system", "user", "assistant", "user"])
        #expect(sent.map { $0["content"] } == ["be brief", odd, "", "\"\n\\"])
        #expect(
            ChatRequestBody.encode(model: "m", messages: [])
                == Array(#"{"messages":[],"model":"m","stream":true,"stream_options":{"include_usage":true}}"#.utf8))
        #expect(
            ChatRequestBody.encode(model: "m", messages: [], includeUsage: false)
                == Array(#"{"messages":[],"model":"m","stream":true}"#.utf8))
    }

    @Test("stream_options asks for the usage chunk as the spec's ChatCompletionStreamOptions has it, and can be left out")
    func streamOptions() throws {
        let messages = [ChatMessage(.system, "s"), ChatMessage(.user, "q")]
        let body = ChatRequestBody.encode(model: "m", messages: messages)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])
        // Only with stream: true; include_usage a boolean; no other field.
        #expect(object["stream"] as? Bool == true)
        let options = try #require(object["stream_options"] as? [String: Any])
        #expect(Array(options.keys) == ["include_usage"])
        #expect(options["include_usage"] as? Bool == true)
        #expect(object.keys.sorted() == ["messages", "model", "stream", "stream_options"])
        let plain = ChatRequestBody.encode(model: "m", messages: messages, includeUsage: false)
        let without = try #require(try JSONSerialization.jsonObject(with: Data(plain)) as? [String: Any])
        #expect(without.keys.sorted() == ["messages", "model", "stream"])
    }

    @Test("a message with a photo is a text part and a data-URI image part; others stay strings")
    func imageParts() throws {
        // Lengths 0...3 mod 3 cover every padding case; every byte value appears.
        for length in [3, 4, 5, 300, 1001] {
            let jpeg = [0xFF, 0xD8] + (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37) } + [0xFF, 0xD9]
            let messages = [ChatMessage(.system, "s"), ChatMessage(.user, "what \"is\" this?\n", imageJPEG: jpeg)]
            let body = ChatRequestBody.encode(model: "vision", messages: messages)
            let object = try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])
            let sent = try #require(object["messages"] as? [[String: Any]])
            #expect(sent[0]["content"] as? String == "s")
            #expect(sent[1]["role"] as? String == "user")
            let parts = try #require(sent[1]["content"] as? [[String: Any]])
            #expect(parts.count == 2)
            #expect(parts[0]["type"] as? String == "text" && parts[0]["text"] as? String == "what \"is\" this?\n")
            #expect(parts[1]["type"] as? String == "image_url")
            let url = try #require((parts[1]["image_url"] as? [String: Any])?["url"] as? String)
            let prefix = "data:image/jpeg;base64,"
            #expect(url.hasPrefix(prefix))
            let encoded = String(url.dropFirst(prefix.count))
            #expect(encoded == Data(jpeg).base64EncodedString())
            #expect(Data(base64Encoded: encoded).map(Array.init) == jpeg)
        }
    }

    @Test("base64 matches RFC 4648's test vectors")
    func base64Vectors() {
        let vectors = ["": "", "f": "Zg==", "fo": "Zm8=", "foo": "Zm9v", "foob": "Zm9vYg==", "fooba": "Zm9vYmE=",
            "foobar": "Zm9vYmFy"]
        for (input, output) in vectors {
            var out: [UInt8] = Array("x".utf8)
            ChatRequestBody.appendBase64(Array(input.utf8), to: &out)
            #expect(out == Array(("x" + output).utf8), "\(input)")
        }
        var out: [UInt8] = []
        ChatRequestBody.appendBase64([0xFB, 0xFF, 0xBF], to: &out)
        #expect(out == Array("+/+/".utf8))
    }
}
