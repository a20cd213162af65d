// SPDX-License-Identifier: GPL-2.0-or-later
import Agent
import Foundation
import Testing

@Suite("Agent JSON", .timeLimit(.minutes(5)))
struct AgentJSONTests {
    private func decode(_ text: String) throws -> AgentJSON {
        try JSONDecoder().decode(AgentJSON.self, from: Data(text.utf8))
    }

    private func encode(_ value: AgentJSON) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    @Test("decodes every kind of value; whole numbers stay integers")
    func decodes() throws {
        let value = try decode(#"{"a":null,"b":true,"c":8765,"d":1.5,"e":"x","f":[1,"y",false],"g":{"h":-3}}"#)
        #expect(
            value == [
                "a": nil, "b": true, "c": .integer(8765), "d": .number(1.5), "e": "x", "f": [1, "y", false],
                "g": ["h": -3],
            ])
        #expect(try decode("12345678901234") == .integer(12_345_678_901_234))
        _ = try? decode("1e400")  // out of range: an error or infinity, never a trap
    }

    @Test("integers are written as integers, and a round trip keeps the value")
    func encodes() throws {
        let properties: AgentJSON = ["websocket_server": ["port": 8766, "gain": 0.5, "on": true, "tag": nil]]
        #expect(try encode(properties) == #"{"websocket_server":{"gain":0.5,"on":true,"port":8766,"tag":null}}"#)
        #expect(try decode(try encode(properties)) == properties)
    }

    @Test("lenient readers")
    func readers() throws {
        let value = try decode(#"{"i":"42","f":3.0,"g":3.5,"t":1,"s":"true","n":null}"#)
        #expect(value["i"]?.integerValue == 42)
        #expect(value["f"]?.integerValue == 3)
        #expect(value["g"]?.integerValue == nil)
        #expect(value["t"]?.boolValue == true)
        #expect(value["s"]?.boolValue == true)
        #expect(value["n"]?.stringValue == nil)
        #expect(value["missing"] == nil)
        #expect(AgentJSON.number(1e300).integerValue == nil)  // no trap out of range
        #expect(AgentJSON.array([1])["x"] == nil)
    }
}
