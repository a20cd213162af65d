// SPDX-License-Identifier: GPL-2.0-or-later
import Agent
import Concurrency
import Foundation
import Testing
import TestSupport

@Suite("Agent server messages", .timeLimit(.minutes(5)))
struct AgentServerMessageTests {
    private func decode(_ text: String, _ chunks: inout TranscriptChunks<ManualClock>, at ms: Int = 0) -> [AgentInbound]
    {
        AgentServerMessage.decode(text, chunks: &chunks, at: Time.at(ms))
    }

    private func decode(_ text: String) -> [AgentInbound] {
        var chunks = TranscriptChunks<ManualClock>()
        return decode(text, &chunks)
    }

    private let hello = Transcript(
        role: .assistant, text: "hello", isFinal: true, textTS: 1_750_000_000_000, dataType: "transcribe", streamID: 0)

    @Test("text_data with the transcript as an object")
    func dataObject() {
        let message =
            #"{"type":"data","name":"text_data","data":{"role":"assistant","text":"hello","is_final":true,"text_ts":1750000000000,"data_type":"transcribe","stream_id":0}}"#
        #expect(decode(message) == [.transcript(hello)])
    }

    @Test("text_data with the transcript as JSON text")
    func dataString() throws {
        let inner = Chunker.transcript("hello")
        let message = try JSONEncoder().encode(["type": "data", "name": "text_data", "data": inner])
        #expect(decode(String(decoding: message, as: UTF8.self)) == [.transcript(hello)])
    }

    @Test("text_data as chunks: nothing until the last part, then the transcript")
    func dataChunks() throws {
        let text = String(repeating: "A long answer. ", count: 100)
        let parts = Chunker.chunks(Chunker.transcript(text))
        #expect(parts.count > 1)
        var chunks = TranscriptChunks<ManualClock>()
        var out: [AgentInbound] = []
        for (i, part) in parts.reversed().enumerated() {
            let message = try JSONEncoder().encode(["type": "data", "name": "text_data", "data": part])
            out += decode(String(decoding: message, as: UTF8.self), &chunks, at: i * 40)
        }
        var expected = hello
        expected.text = text
        #expect(out == [.transcript(expected)])
    }

    @Test("a chunk that does not parse, and a chunked payload that is not JSON, are ignored")
    func badChunks() {
        var chunks = TranscriptChunks<ManualClock>()
        let bad = decode(#"{"type":"data","name":"text_data","data":"id|0|1|QUJD"}"#, &chunks)
        #expect(bad == [.ignored("a malformed transcript chunk")])
        let notJSON = decode(#"{"type":"data","name":"text_data","data":"id|1|1|QUJD"}"#, &chunks)
        #expect(notJSON == [.ignored("a chunked transcript that is not JSON")])
    }

    @Test("audio with its metadata; defaults when it says nothing")
    func audio() {
        let pcm: [UInt8] = [0, 1, 2, 3, 0xFF, 0x7F]
        let b64 = Data(pcm).base64EncodedString()
        #expect(
            decode(
                #"{"type":"audio","audio":"\#(b64)","metadata":{"sample_rate":24000,"channels":1,"bytes_per_sample":2,"samples_per_channel":3}}"#
            ) == [.audio(pcm: pcm, sampleRate: 24_000, channels: 1)])
        #expect(decode(#"{"type":"audio","audio":"\#(b64)"}"#) == [.audio(pcm: pcm, sampleRate: 16_000, channels: 1)])
        #expect(decode(#"{"type":"audio","audio":"***"}"#) == [.ignored("audio that is not base64")])
        #expect(
            decode(#"{"type":"audio","audio":"\#(b64)","metadata":{"bytes_per_sample":4}}"#)
                == [.ignored("audio of 4 bytes per sample")])
        #expect(decode(#"{"type":"audio","audio":"AAAA","metadata":{"sample_rate":-1}}"#).first != nil)
    }

    @Test("errors as text or object; commands by name")
    func errorsAndCommands() {
        #expect(decode(#"{"type":"error","error":"STT failed"}"#) == [.error("STT failed")])
        #expect(decode(#"{"type":"error","error":{"message":"quota","code":429}}"#) == [.error("quota")])
        #expect(decode(#"{"type":"error","error":{"code":1}}"#) == [.error(#"{"code":1}"#)])
        #expect(decode(#"{"type":"error"}"#) == [.error("The agent reported an error.")])
        #expect(decode(#"{"type":"cmd","name":"flush","data":{}}"#) == [.command("flush")])
        #expect(decode(#"{"type":"cmd"}"#) == [.ignored("a command without a name")])
    }

    @Test(
        "anything else is ignored, with a reason",
        arguments: [
            ("", "not a JSON object"), ("[1,2]", "not a JSON object"), ("42", "not a JSON object"),
            (#"{"name":"text_data"}"#, "a message without a type"),
            (#"{"type":"asr_result"}"#, "a message of type asr_result"),
            (#"{"type":"data","name":"other","data":{}}"#, "data named \"other\""),
            (#"{"type":"data","name":"text_data"}"#, "text_data without data"),
            (#"{"type":"data","name":"text_data","data":{"text":"x"}}"#, "text_data without a role or text"),
            (#"{"type":"data","name":"text_data","data":"plain words"}"#, "text_data that is neither JSON nor a chunk"),
        ])
    func ignored(_ text: String, _ reason: String) {
        #expect(decode(text) == [.ignored(reason)])
    }

    @Test("random input never crashes")
    func fuzz() {
        var generator = SplitMix64(seed: 2026)
        var chunks = TranscriptChunks<ManualClock>()
        let pieces = [
            "{", "}", "[", "]", "\"", ":", ",", "type", "data", "text_data", "audio", "error", "cmd", "name", "|",
            "???",
            "1", "-1", "1e999", "null", "true", "\\u0000", "\\ud800", "QUJD", "role", "user", "text", "is_final",
            "text_ts",
            "metadata", "sample_rate", " ", "é", "\u{0}",
        ]
        for round in 0..<3000 {
            let text: String
            if round % 2 == 0 {
                let bytes = (0..<Int.random(in: 0...200, using: &generator)).map { _ in
                    UInt8.random(in: 0...255, using: &generator)
                }
                text = String(decoding: bytes, as: UTF8.self)
            } else {
                text = (0..<Int.random(in: 0...40, using: &generator)).map { _ in
                    pieces.randomElement(using: &generator)!
                }.joined()
            }
            _ = decode(text, &chunks, at: round)
        }
        // Deep nesting.
        _ = decode(String(repeating: "[", count: 100_000))
        _ = decode(String(repeating: #"{"a":"#, count: 10_000))
    }
}
