// SPDX-License-Identifier: GPL-2.0-or-later
@testable import AssistantEngine
import Synchronization
import Testing

@Suite("Speech client (text to speech)", .timeLimit(.minutes(5)))
struct SpeechClientUnitTests {
    private func client(_ transport: ScriptedTransport, speed: Double? = nil, key: String? = "sk-secret-key-123") -> SpeechClient {
        SpeechClient(
            config: SpeechServerConfig(
                baseURL: "http://example.test/v1/", model: "tts-1", voice: "alloy", format: .pcm, speed: speed, apiKey: key,
                timeout: .seconds(30)),
            transport: transport, sleep: SleepLog().sleep)
    }

    private static func audio(_ chunks: [String], failure: HTTPTransportError? = nil) -> ScriptedTransport.Canned {
        .init(status: 200, headers: ["content-type": "audio/pcm"], chunks: chunks, failure: failure)
    }

    private func read(_ stream: SpeechAudioStream) async throws -> String {
        var text = ""
        for try await chunk in stream { text += String(decoding: chunk, as: UTF8.self) }
        return text
    }

    @Test("CreateSpeechRequest's JSON to {base}/audio/speech, speed only when set; the audio as sent, empty chunks skipped")
    func request() async throws {
        let transport = ScriptedTransport([Self.audio(["", "ab", "", "cd"]), Self.audio(["x"])])
        #expect(try await read(client(transport).speak("Hi \"you\"/é")) == "abcd")
        _ = try await read(client(transport, speed: 1.5, key: nil).speak("Hi"))
        let (first, second) = transport.requests.withLock { ($0[0], $0[1]) }
        #expect(first.url == "http://example.test/v1/audio/speech" && first.method == "POST")
        #expect(
            String(decoding: first.body, as: UTF8.self)
                == #"{"input":"Hi \"you\"/é","model":"tts-1","response_format":"pcm","voice":"alloy"}"#)
        #expect(first.headers.contains { $0.name == "Authorization" && $0.value == "Bearer sk-secret-key-123" })
        #expect(String(decoding: second.body, as: UTF8.self).contains(#""speed":1.5"#))
        #expect(!second.headers.contains { $0.name == "Authorization" })
    }

    @Test("refused before sending: no text, over 4096 characters, a speed outside 0.25...4")
    func refusedHere() async throws {
        let transport = ScriptedTransport([.init(status: 404, headers: [:], chunks: [])])
        await #expect(throws: AssistantError.invalidArgs("There is no text to speak.")) { try await client(transport).speak("") }
        _ = try? await client(transport).speak(String(repeating: "a", count: 4096))
        await #expect(throws: AssistantError.invalidArgs("The text to speak is longer than 4096 characters.")) {
            try await client(transport).speak(String(repeating: "a", count: 4097))
        }
        await #expect(throws: AssistantError.invalidArgs("The speech speed must be in 0.25...4, not 5.0.")) {
            try await client(transport, speed: 5).speak("hi")
        }
        #expect(transport.count == 1)  // only the 4096 one
    }

    @Test("405 is NotConfigured too; JSON or text where audio was due, and an empty body, are final errors")
    func notAudio() async throws {
        let t405 = ScriptedTransport([.init(status: 405, headers: [:], chunks: [])])
        await #expect(throws: AssistantError.notConfigured("example.test has no speech endpoint at http://example.test/v1/audio/speech (HTTP 405).")) {
            try await client(t405).speak("hi")
        }
        let json = ScriptedTransport([
            .init(status: 200, headers: ["content-type": "application/json"], chunks: [#"{"error":{"message":"no voice sk-secret-key-123"}}"#])
        ])
        await #expect(throws: AssistantError.upstreamFailed("example.test sent application/json, not audio: no voice [redacted]")) {
            try await client(json).speak("hi")
        }
        let empty = ScriptedTransport([Self.audio([])])
        await #expect(throws: AssistantError.upstreamFailed("example.test sent no audio.")) { try await client(empty).speak("hi") }
        #expect(t405.count == 1 && json.count == 1 && empty.count == 1)
    }

    @Test("a connection lost before the first byte is retried; after it, the reading fails and nothing is asked again")
    func firstByte() async throws {
        let transport = ScriptedTransport([
            Self.audio([], failure: .connectionFailed("reset")), Self.audio(["ab"], failure: .connectionFailed("reset by sk-secret-key-123")),
        ])
        let stream = try await client(transport).speak("hi")
        var got = ""
        do {
            for try await chunk in stream { got += String(decoding: chunk, as: UTF8.self) }
            Issue.record("a cut stream read as whole")
        } catch {
            #expect(error == .upstreamFailed("Cannot reach example.test: reset by [redacted]"))
        }
        #expect(got == "ab" && transport.count == 2)
    }
}
