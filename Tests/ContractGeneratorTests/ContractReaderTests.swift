// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation
import Testing

@testable import ContractGenerator

/// What the generator accepts of an introspection file, and how it says what it refuses (the
/// build stops with that sentence).
@Suite("Contract generator", .timeLimit(.minutes(5)))
struct ContractReaderTests {
    private func interface(_ body: String) throws(GeneratorError) -> Interface {
        let xml = "<node><interface name=\"org.example.Thing1\">\(body)</interface></node>"
        let root = try XMLTree.parse(Data(xml.utf8), file: "test.xml")
        return try Interface(root.elements("interface")[0], file: "test.xml")
    }

    private func refusal(_ body: String) -> String {
        do {
            _ = try interface(body)
            return ""
        } catch {
            return error.description
        }
    }

    @Test("methods, properties and signals with their arguments, types and change signals")
    func reads() throws {
        let thing = try interface(
            """
            <method name="Get"><arg name="query_id" type="s" direction="in"/><arg name="rows" type="a(su)" direction="out"/></method>
            <property name="Size" type="u" access="read"><annotation name="org.freedesktop.DBus.Property.EmitsChangedSignal" value="const"/></property>
            <signal name="Changed"><arg name="value" type="x"/></signal>
            """)
        #expect(thing.short == "Thing1")
        #expect(thing.methods[0].input.map(\.name) == ["query_id"])
        #expect(thing.methods[0].output.map(\.type.signature) == ["a(su)"])
        #expect(thing.properties[0].change == "const")
        #expect(thing.signals[0].arguments.map(\.type.signature) == ["x"])
    }

    @Test("an a{sv} names its struct and keys: alternatives, nested structs, refusing others")
    func keyedStructs() throws {
        let thing = try interface(
            """
            <method name="Set"><arg name="options" type="a{sv}" direction="in">
              <annotation name="org.glassd.Struct" value="SetOptions"/>
              <annotation name="org.glassd.Keys" value="file:s|h, force:b, more:aa{sv}@SetOptions"/>
              <annotation name="org.glassd.UnknownKeys" value="refuse"/>
            </arg></method>
            """)
        let options = try #require(thing.structs.first)
        #expect(options.name == "SetOptions" && options.refusesUnknown)
        #expect(options.keys.map(\.type.signature) == ["s|h", "b", "aa{sv}"])
        #expect(options.keys[2].type.structName == "SetOptions")
    }

    @Test("what it refuses, it says: an unnamed a{sv}, a struct without keys, a bad type or annotation, a member twice")
    func refusals() {
        #expect(refusal(#"<method name="M"><arg name="o" type="a{sv}"/></method>"#).contains("name its struct"))
        #expect(
            refusal(#"<method name="M"><arg name="o" type="a{sv}"><annotation name="org.glassd.Struct" value="O"/></arg></method>"#)
                .contains("struct O has no org.glassd.Keys"))
        #expect(refusal(#"<property name="P" type="z" access="read"/>"#).contains("'z' is no D-Bus type"))
        #expect(refusal(#"<property name="P" type="s" access="write"/>"#).contains("access \"write\""))
        #expect(refusal(#"<property name="P" type="s" access="read"/><property name="P" type="s" access="read"/>"#).contains("P twice"))
        #expect(
            refusal(
                #"<method name="M"><arg name="o" type="a{sv}"><annotation name="org.glassd.Struct" value="O"/><annotation name="org.glassd.Keys" value="a:s|a{sv}"/></arg></method>"#
            ).contains("alternatives must be basic types"))
        #expect(refusal(#"<method name="Proxy"/>"#).contains("declared twice"))
        #expect(throws: GeneratorError.self) { try XMLTree.parse(Data("<node>".utf8), file: "bad.xml") }
    }

    @Test("Swift names: members lower camel case, arguments and keys camel case, keywords quoted")
    func names() {
        #expect(Emit.lowerCamel("FPGAVersion") == "fpgaVersion")
        #expect(Emit.lowerCamel("RSSI") == "rssi")
        #expect(Emit.lowerCamel("AnswerOf") == "answerOf")
        #expect(Emit.camel("query_id") == "queryID")
        #expect(Emit.camel("listened_seconds") == "listenedSeconds")
        #expect(Emit.identifier("final") == "`final`")
    }
}
