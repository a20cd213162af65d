// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation
@testable import GlassdCore
import Testing

@Suite("Chat request body")
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
        #expect(ChatRequestBody.encode(model: "m", messages: []) == Array(#"{"messages":[],"model":"m","stream":true}"#.utf8))
    }
}
