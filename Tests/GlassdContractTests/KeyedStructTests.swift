// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import GlassdAPI
import GlassdContract
import Testing

/// The structs generated for each a{sv}: their keys' types are checked, unknown keys refused or
/// ignored as the XML says, and they are written back as they were read.
@Suite("Contract a{sv} structs", .timeLimit(.minutes(5)))
struct KeyedStructTests {
    private func dict(_ entries: [(String, DBusValue)]) -> DBusValue {
        .dict(key: "s", value: "v", entries.map { .init(.string($0.0), .variant($0.1)) })
    }

    @Test("Update's options: force a boolean; the images' keys (each kind names its components) kept as given, written back after force")
    func updateOptions() throws {
        let options = try GlassdBus.Manager1.UpdateOptions(dict([("firmware", .string("/x.zip")), ("fpga", .unixFD(7)), ("force", .bool(true))]))
        #expect(options == .init(force: true, others: ["firmware": .string("/x.zip"), "fpga": .unixFD(7)]))
        #expect(try GlassdBus.Manager1.UpdateOptions(dict([])) == .init())
        #expect(options.busValue == dict([("force", .bool(true)), ("firmware", .string("/x.zip")), ("fpga", .unixFD(7))]))
        #expect(options.dictionary == ["force": .bool(true), "firmware": .string("/x.zip"), "fpga": .unixFD(7)])
    }

    @Test("a wrong type is refused naming the key and the type; a struct that refuses unknown keys names the allowed ones")
    func refused() {
        #expect(throws: ContractError.unknownKey("speed", signature: "u", allowed: ["graph"])) {
            try GlassdBus.Manager1.StartAgentOptions(dict([("graph", .string("g")), ("speed", .uint32(3))]))
        }
        #expect(throws: ContractError.wrongType(at: "force", expected: "b", got: "s")) {
            try GlassdBus.Manager1.UpdateOptions(dict([("force", .string("yes"))]))
        }
        // A variant in a variant is a variant, not the value inside.
        #expect(throws: ContractError.wrongType(at: "force", expected: "b", got: "v")) {
            try GlassdBus.Manager1.UpdateOptions(dict([("force", .variant(.bool(true)))]))
        }
        #expect(throws: ContractError.wrongType(at: "", expected: "a{sv}", got: "s")) {
            try GlassdBus.Manager1.UpdateOptions(.string("firmware"))
        }
    }

    @Test("a typed answer tolerates keys it does not know, and reads its parts as the same struct")
    func typedAnswer() throws {
        let part = dict([("kind", .string("table")), ("columns", .array(element: "s", [.string("a")])),
                         ("rows", .array(element: "as", [.array(element: "s", [.string("1")])]))])
        let answer = try GlassdBus.Manager1.TypedAnswerFields(
            dict([("kind", .string("table")), ("future", .uint32(1)), ("parts", .array(element: "a{sv}", [part]))]))
        #expect(answer.kind == "table")
        #expect(answer.parts?.first?.rows == [["1"]])
        #expect(answer.parts?.first?.columns == ["a"])
        #expect(throws: ContractError.wrongType(at: "rows", expected: "aas", got: "as")) {
            try GlassdBus.Manager1.TypedAnswerFields(dict([("rows", .array(element: "s", [.string("1")]))]))
        }
    }

    @Test("a struct is written in the XML's key order, in variants, only the keys set; read back it is the same")
    func roundTrip() throws {
        let fields = GlassdBus.Manager1.TypedAnswerFields(
            kind: "place", name: "Home", latitude: 1.5, longitude: -2, textForm: "Home", answeredBy: "",
            parts: [.init(kind: "place", name: "Home", latitude: 1.5, longitude: -2)])
        guard case .dict("s", "v", let entries) = fields.busValue else { Issue.record("not an a{sv}"); return }
        #expect(entries.map { $0.key.string ?? "" } == ["kind", "name", "latitude", "longitude", "text_form", "answered_by", "parts"])
        #expect(entries[2].value == .variant(.double(1.5)))
        #expect(try GlassdBus.Manager1.TypedAnswerFields(fields.busValue) == fields)
        #expect(try GlassdBus.Manager1.TypedAnswerFields(from: fields.dictionary) == fields)
        #expect(fields.dictionary["parts"]?.signature == "aa{sv}")
    }

    @Test("Wake's value: off has its state alone")
    func wake() {
        #expect(GlassdBus.Manager1.WakeFields(state: "off").busValue == .dict(key: "s", value: "v", [.init(.string("state"), .variant(.string("off")))]))
    }

    @Test("a signal's arguments are read typed, and a wrong one is named")
    func signals() throws {
        let transcript = GlassdBus.AgentSession1.Transcript(role: "user", text: "hi", final: true, textTS: 7)
        #expect(transcript.values == [.string("user"), .string("hi"), .bool(true), .uint64(7)])
        #expect(try GlassdBus.AgentSession1.Transcript(transcript.values) == transcript)
        #expect(throws: ContractError.missingArgument(at: "text_ts")) {
            try GlassdBus.AgentSession1.Transcript([.string("user"), .string("hi"), .bool(true)])
        }
        #expect(throws: ContractError.wrongType(at: "success", expected: "b", got: "s")) {
            try GlassdBus.Job1.Finished([.string("true"), .string("done")])
        }
    }
}
