// SPDX-License-Identifier: GPL-2.0-or-later
@testable import AnswerModel
@testable import AssistantEngine
import Testing

@Suite("Ordered JSON", .timeLimit(.minutes(5)))
struct OrderedJSONTests {
    private func parse(_ text: String) throws -> OrderedJSON { try OrderedJSON.parse(Array(text.utf8)) }

    @Test("object members keep document order, nested too")
    func order() throws {
        let json = try parse(#" {"zeta":1,"alpha":{"q":2,"b":3},"mid":[true,false,null],"beta":-0.5e+2} "#)
        #expect(json.members?.map(\.key) == ["zeta", "alpha", "mid", "beta"])
        #expect(json["alpha"]?.members?.map(\.key) == ["q", "b"])
        #expect(json["mid"] == .array([.bool(true), .bool(false), .null]))
        #expect(json["beta"] == .number("-0.5e+2"))
        #expect(json["beta"]?.double == -50)
        #expect(try parse(#"{"a":1,"a":2}"#)["a"] == .number("2"))
    }

    @Test("string escapes, surrogate pairs and raw UTF-8")
    func strings() throws {
        #expect(try parse(#""a\"b\\c\/d\n\t\u00e9\ud83d\ude00ü""#) == .string("a\"b\\c/d\n\té😀ü"))
        #expect(try parse(#""\ud83d""#) == .string("\u{FFFD}"))
        #expect(try parse(#""12.5""#).double == 12.5)
    }

    @Test("malformed documents are refused", arguments: [
        "", "{", "[1,]", #"{"a":1,}"#, #"{"a" 1}"#, "01", "1.", "-", "+1", "tru", #""a"#, "\"\u{01}\"", #""\x""#,
        #""\u12g4""#, "[1] 2", "{a:1}", "nan",
    ])
    func refused(text: String) {
        #expect(throws: OrderedJSON.ParseError.self) { try parse(text) }
    }

    @Test("nesting is bounded")
    func depth() throws {
        #expect(throws: OrderedJSON.ParseError.self) { try parse(String(repeating: "[", count: 100_000)) }
        _ = try parse(String(repeating: "[", count: 60) + String(repeating: "]", count: 60))
    }
}
