// SPDX-License-Identifier: GPL-2.0-or-later
import AssistantEngine
import Logging
import Product
import Synchronization
import Testing

/// A speech server that has no speech endpoint: every request is a 404.
final class NoSpeechServer: HTTPTransport {
    let requests = Mutex(0)

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        requests.withLock { $0 += 1 }
        let (body, sink) = AsyncThrowingStream.makeStream(of: [UInt8].self)
        sink.yield(Array(#"{"detail":"Not Found"}"#.utf8))
        sink.finish()
        return HTTPResponse(status: 404, headers: ["content-type": "application/json"], body: body)
    }
}

@Suite("The speech server's voice", .timeLimit(.minutes(5)))
struct SpeechServerVoiceTests {
    @Test("a server without /audio/speech (404): the voice goes off for the rest of the run, asked once")
    func offAfterNotConfigured() async throws {
        let server = NoSpeechServer()
        let voice = SpeechServerVoice(
            client: SpeechClient(
                config: SpeechServerConfig(baseURL: "http://server/v1", model: "tts-1", voice: "alloy", apiKey: nil, timeout: .seconds(30)),
                transport: server),
            logger: Logger(label: "test"))
        for sentence in ["One.", "Two.", "Three."] {
            await #expect(throws: SpeechVoiceOff.self) { _ = try await voice.speak(sentence) }
        }
        #expect(server.requests.withLock { $0 } == 1, "asked once, then off")
    }
}
