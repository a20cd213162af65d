// SPDX-License-Identifier: GPL-2.0-or-later
@testable import AssistantEngine
import Foundation
import HTTPKit
import Testing

/// The embedded speech server (Scripts/speech_server.py: Whisper tiny.en on faster-whisper) on its
/// own, through glassd's own transcription client and raw requests over libcurl, with speech
/// spoken by espeak-ng.
@Suite("The embedded speech server", .timeLimit(.minutes(5)), .enabled(if: EmbeddedBackend.ready, "the embedded backend is not set up"))
struct SpeechServerTests {
    /// espeak-ng saying `text`, as a WAV file's bytes.
    private func spoken(_ text: String, in directory: String) async throws -> [UInt8] {
        let path = directory + "/\(abs(text.hashValue)).wav"
        let made = try await runCommand("espeak-ng", ["-w", path, text])
        guard made.ok else { throw TestFailure("espeak-ng: \(made.stderr)") }
        return Array(try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// POSTs a multipart form to `url` + /audio/transcriptions: (status, content type, body).
    private func post(_ url: String, _ parts: [MultipartBody.Part]) async throws -> (Int, String, [UInt8]) {
        let form = MultipartBody(parts)
        let response = try await CurlHTTPTransport().send(
            HTTPRequest(
                url: url + "/audio/transcriptions", headers: [("Content-Type", form.contentType)], body: form.bytes,
                timeout: .seconds(60)))
        var body: [UInt8] = []
        for try await chunk in response.body { body += chunk }
        return (response.status, response.headers["content-type"] ?? "", body)
    }

    private func json(_ bytes: [UInt8]) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any] ?? [:]
    }

    @Test("glassd's client gets the words; text and verbose_json have OpenAI's shape; not audio is 400 in OpenAI's error shape; two at once are both answered")
    func shapes() async throws {
        try await World.with { world in
            let question = try await spoken("what is the capital of france", in: world.directory)
            let other = try await spoken("how far away is the moon", in: world.directory)
            try await EmbeddedBackend.withSpeech(in: world.directory) { _, url, model in
                #expect(model == "whisper-tiny.en")
                let client = TranscriptionClient(
                    config: TranscriptionConfig(baseURL: url, model: model, apiKey: nil, timeout: .seconds(60)),
                    transport: try CurlHTTPTransport())
                let heard = try await client.transcribe(wav: question, task: .transcribe).lowercased()
                #expect(heard.contains("capital") && heard.contains("france"), "\(heard)")

                let audio = MultipartBody.Part.file(name: "file", filename: "q.wav", contentType: "audio/wav", bytes: question)
                let (textStatus, textType, text) = try await post(url, [.field(name: "model", value: model), .field(name: "response_format", value: "text"), audio])
                #expect(textStatus == 200 && textType.hasPrefix("text/plain"))
                #expect(String(decoding: text, as: UTF8.self).lowercased().contains("france"))

                // CreateTranscriptionResponseVerboseJson and TranscriptionSegment: their required fields.
                let (verboseStatus, _, verbose) = try await post(
                    url, [.field(name: "model", value: model), .field(name: "response_format", value: "verbose_json"), audio])
                let object = json(verbose)
                #expect(verboseStatus == 200)
                for key in ["language", "duration", "text"] { #expect(object[key] != nil, "no \(key)") }
                let segments = object["segments"] as? [[String: Any]] ?? []
                #expect(!segments.isEmpty)
                for key in ["id", "seek", "start", "end", "text", "tokens", "temperature", "avg_logprob", "compression_ratio", "no_speech_prob"] {
                    #expect(segments.allSatisfy { $0[key] != nil }, "a segment has no \(key)")
                }

                // Not audio, and no model: 400 with {"error": {"message", "type", "param", "code"}}.
                let notAudio = MultipartBody.Part.file(name: "file", filename: "q.wav", contentType: "audio/wav", bytes: Array("not audio at all".utf8))
                for (parts, param) in [([.field(name: "model", value: model), notAudio], "file"), ([audio], "model")] as [([MultipartBody.Part], String)] {
                    let (status, _, body) = try await post(url, parts)
                    let error = json(body)["error"] as? [String: Any] ?? [:]
                    #expect(status == 400, "\(String(decoding: body, as: UTF8.self))")
                    #expect(error["message"] is String && error["type"] as? String == "invalid_request_error" && error["param"] as? String == param)
                }

                // Two at once: the second waits its turn, both are answered.
                async let first = client.transcribe(wav: question, task: .transcribe)
                async let second = client.transcribe(wav: other, task: .transcribe)
                let (a, b) = try await (first, second)
                #expect(a.lowercased().contains("france") && b.lowercased().contains("moon"), "\(a) | \(b)")
            }
        }
    }
}
