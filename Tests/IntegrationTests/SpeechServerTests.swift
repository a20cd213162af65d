// SPDX-License-Identifier: GPL-2.0-or-later
@testable import AssistantEngine
import Audio
import Foundation
import HTTPKit
import Testing

/// The embedded speech server (Scripts/speech_server.py: Whisper tiny.en on faster-whisper, and
/// espeak-ng for /v1/audio/speech) on its own, through glassd's own transcription and speech
/// clients and raw requests over libcurl, with speech spoken by espeak-ng.
@Suite("The embedded speech server", .timeLimit(.minutes(8)), .enabled(if: EmbeddedBackend.ready, "the embedded backend is not set up"))
struct SpeechServerTests {
    /// espeak-ng saying `text`, as a WAV file's bytes.
    private func spoken(_ text: String, voice: String? = nil, in directory: String) async throws -> [UInt8] {
        let path = directory + "/\(abs(text.hashValue)).wav"
        let made = try await runCommand("espeak-ng", (voice.map { ["-v", $0] } ?? []) + ["-w", path, text])
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

    /// POSTs JSON to `url` + /audio/speech: (status, content type, body).
    private func speech(_ url: String, _ json: String) async throws -> (Int, String, [UInt8]) {
        let response = try await CurlHTTPTransport().send(
            HTTPRequest(
                url: url + "/audio/speech", headers: [("Content-Type", "application/json")], body: Array(json.utf8),
                timeout: .seconds(60)))
        var body: [UInt8] = []
        for try await chunk in response.body { body += chunk }
        return (response.status, response.headers["content-type"] ?? "", body)
    }

    private func allBytes(_ client: SpeechClient, _ text: String) async throws -> [UInt8] {
        var bytes: [UInt8] = []
        for try await chunk in try await client.speak(text) { bytes += chunk }
        return bytes
    }

    private func get(_ url: String) async throws -> [UInt8] {
        let response = try await CurlHTTPTransport().send(HTTPRequest(method: "GET", url: url, timeout: .seconds(10)))
        var body: [UInt8] = []
        for try await chunk in response.body { body += chunk }
        return body
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
                let models = try await get(url + "/models")
                #expect((json(models)["data"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == [model, "whisper-base", "espeak-ng"])
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
                // The same words from the whole 30 s window (verbose_json) as from the short one (json, text).
                #expect((object["text"] as? String)?.lowercased().contains("france") == true, "\(object)")
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

                // Silence in the short window: no words (Whisper's own no-speech judgement).
                let silence = WAV.encode([Int16](repeating: 0, count: 32_000), sampleRate: 16_000)
                #expect(try await client.transcribe(wav: silence, task: .transcribe) == "")

                // A long question (over 9 s: the 30 s window) is decoded to its end: the decoding cap (tokens per second of speech)
                // stops a loop, not the words.
                let long = try await spoken(
                    "please remind me tomorrow morning at half past seven to call the dentist about my appointment, "
                        + "and then to buy bread, milk and eggs on the way home from work", in: world.directory)
                let longHeard = try await client.transcribe(wav: long, task: .transcribe).lowercased()
                let lastWords = longHeard.split { !$0.isLetter }.suffix(2).joined(separator: " ")
                #expect(longHeard.contains("dentist") && lastWords == "from work", "\(longHeard)")

                // Two at once: the second waits its turn, both are answered.
                async let first = client.transcribe(wav: question, task: .transcribe)
                async let second = client.transcribe(wav: other, task: .transcribe)
                let (a, b) = try await (first, second)
                #expect(a.lowercased().contains("france") && b.lowercased().contains("moon"), "\(a) | \(b)")
            }
        }
    }

    @Test("A request whose client left while it waited its turn is not transcribed: the next one does not wait for it")
    func leftBeforeItsTurn() async throws {
        try await World.with { world in
            let long = try await spoken(
                "please remind me tomorrow morning at half past seven to call the dentist about my appointment, "
                    + "and then to buy bread, milk and eggs on the way home from work", in: world.directory)
            let short = try await spoken("what is the capital of france", in: world.directory)
            let shortPath = world.directory + "/left.wav"
            try Data(short).write(to: URL(fileURLWithPath: shortPath))
            try await EmbeddedBackend.withSpeech(in: world.directory) { _, url, model in
                let client = TranscriptionClient(
                    config: TranscriptionConfig(baseURL: url, model: model, apiKey: nil, timeout: .seconds(60)),
                    transport: try CurlHTTPTransport())
                // The long question (the 30 s window) holds the turn while a second client sends its question and
                // closes the connection at once, as glassd does with an eager look it no longer needs.
                async let first = client.transcribe(wav: long, task: .transcribe)
                let port = EmbeddedBackend.port(of: url) ?? 0
                let left = try await runCommand("python3", ["-c", Self.leavingClient, "\(port)", shortPath])
                #expect(left.ok, "\(left.stderr)")
                #expect(try await first.lowercased().contains("dentist"))
                // Asked after the first was answered: the one that left had the turn before it.
                #expect(try await client.transcribe(wav: short, task: .transcribe).lowercased().contains("france"))
                let log = (try? String(contentsOfFile: world.directory + "/speech.log", encoding: .utf8)) ?? ""
                #expect(log.contains("the client left before its turn: not transcribed"), "\(log)")
                // Two transcriptions were answered, not three.
                #expect(log.components(separatedBy: "POST /v1/audio/transcriptions HTTP/1.1\" 200").count - 1 == 2, "\(log)")
            }
        }
    }

    /// A client that sends a whole transcription request (argv: port, WAV file) and leaves.
    private static let leavingClient = """
        import socket, sys
        audio = open(sys.argv[2], "rb").read()
        b = "glassd-left"
        body = (f"--{b}\\r\\nContent-Disposition: form-data; name=\\"model\\"\\r\\n\\r\\nwhisper-tiny.en\\r\\n"
                f"--{b}\\r\\nContent-Disposition: form-data; name=\\"file\\"; filename=\\"q.wav\\"\\r\\n"
                "Content-Type: audio/wav\\r\\n\\r\\n").encode() + audio + f"\\r\\n--{b}--\\r\\n".encode()
        s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
        s.sendall(f"POST /v1/audio/transcriptions HTTP/1.1\\r\\nHost: x\\r\\nContent-Type: multipart/form-data; boundary={b}\\r\\n"
                  f"Content-Length: {len(body)}\\r\\n\\r\\n".encode() + body)
        s.close()
        """

    @Test("Spanish speech: glassd's translate task gets English from Whisper base, whatever model it names; a Spanish transcription is Spanish words")
    func translates() async throws {
        try await World.with { world in
            let question = try await spoken("¿dónde está la estación de tren?", voice: "es", in: world.directory)
            try await EmbeddedBackend.withSpeech(in: world.directory) { _, url, model in
                // glassd names the embedded default (tiny.en, English only) for both tasks.
                let client = TranscriptionClient(
                    config: TranscriptionConfig(baseURL: url, model: model, apiKey: nil, timeout: .seconds(240)),
                    transport: try CurlHTTPTransport())
                let english = try await client.transcribe(wav: question, task: .translate).lowercased()
                #expect(english.contains("where") && english.contains("station"), "\(english)")
                let spanish = TranscriptionClient(
                    config: TranscriptionConfig(baseURL: url, model: model, apiKey: nil, timeout: .seconds(240), language: "es"),
                    transport: try CurlHTTPTransport())
                let heard = try await spanish.transcribe(wav: question, task: .transcribe).lowercased()
                #expect(heard.contains("estación") || heard.contains("estacion"), "\(heard)")
            }
        }
    }

    @Test("espeak-ng speaks: WAV and pcm decode to 16 kHz speech as long as the text; bad requests are 400 in OpenAI's error shape; a transcription and a speech at once are both answered")
    func speaks() async throws {
        try await World.with { world in
            let question = try await spoken("what is the capital of france", in: world.directory)
            try await EmbeddedBackend.withSpeech(in: world.directory) { _, url, model in
                // About 15 words: espeak-ng says 175 words a minute, so some 5 s.
                let sentence = "The capital of France is Paris, a city on the river Seine with two million people."
                func client(_ format: SpeechServerConfig.Format) throws -> SpeechClient {
                    SpeechClient(
                        config: SpeechServerConfig(baseURL: url, model: "espeak-ng", voice: "alloy", format: format, apiKey: nil, timeout: .seconds(60)),
                        transport: try CurlHTTPTransport())
                }
                var lengths: [Int] = []
                for (format, input) in [(SpeechServerConfig.Format.wav, SpeechAudio.Input.wav), (.pcm, .pcm(rate: 24_000))] {
                    let clock = ContinuousClock()
                    let asked = clock.now
                    let stream = try await client(format).speak(sentence)
                    let first = clock.now - asked
                    var audio = try SpeechAudio(input)
                    var samples: [Int16] = []
                    for try await chunk in stream { samples += try audio.feed(chunk) }
                    samples += try audio.finish()
                    let last = clock.now - asked
                    print("speech \(format): first byte after \(first), last after \(last), \(samples.count) samples at 16 kHz")
                    let seconds = Double(samples.count) / 16_000
                    #expect(seconds > 3 && seconds < 9, "\(format): \(seconds) s for 15 words")
                    // Speech, not silence: some samples are loud.
                    #expect(samples.contains { abs(Int($0)) > 3_000 })
                    lengths.append(samples.count)
                }
                // The same speech both ways (24 kHz pcm is espeak-ng's 22,050 Hz, interpolated).
                #expect(abs(lengths[0] - lengths[1]) < 16_000 / 50, "\(lengths)")

                // A voice of espeak-ng's own; speed 2 is about half as long.
                let (fast, fastType, fastBody) = try await speech(
                    url, #"{"model":"espeak-ng","input":"Guten Tag, wie geht es dir heute?","voice":"de","speed":2}"#)
                let (slow, _, slowBody) = try await speech(
                    url, #"{"model":"espeak-ng","input":"Guten Tag, wie geht es dir heute?","voice":"de"}"#)
                #expect(fast == 200 && slow == 200 && fastType == "audio/wav")
                #expect(fastBody.count < slowBody.count * 3 / 4, "\(fastBody.count) vs \(slowBody.count)")

                for (body, param) in [
                    (#"{"model":"m","input":"hi","voice":"alloy","response_format":"mp3"}"#, "response_format"),
                    (#"{"model":"m","input":"hi","voice":"zz-nonexistent"}"#, "voice"),
                    (#"{"model":"m","input":"hi","voice":"--help"}"#, "voice"),
                    (#"{"model":"m","input":"","voice":"alloy"}"#, "input"),
                    (#"{"model":"m","input":"\ud800 a lone surrogate","voice":"alloy"}"#, "input"),
                    (#"{"model":"m","input":"\#(String(repeating: "a", count: 4097))","voice":"alloy"}"#, "input"),
                    (#"{"model":"m","input":"hi","voice":"alloy","speed":9}"#, "speed"),
                    (#"{"model":"m","input":"hi","voice":"alloy","volume":3}"#, "volume"),
                    (#"{"input":"hi","voice":"alloy"}"#, "model"),
                ] {
                    let (status, type, answer) = try await speech(url, body)
                    let error = json(answer)["error"] as? [String: Any] ?? [:]
                    #expect(status == 400 && type == "application/json", "\(param): \(String(decoding: answer, as: UTF8.self))")
                    #expect(error["message"] is String && error["type"] as? String == "invalid_request_error" && error["param"] as? String == param, "\(error)")
                }

                // A transcription and a speech at once: each has its own turn, both are answered.
                let transcriber = TranscriptionClient(
                    config: TranscriptionConfig(baseURL: url, model: model, apiKey: nil, timeout: .seconds(60)),
                    transport: try CurlHTTPTransport())
                let speaker = try client(.wav)
                async let heard = transcriber.transcribe(wav: question, task: .transcribe)
                async let said = allBytes(speaker, sentence)
                let (text, audio) = try await (heard, said)
                #expect(text.lowercased().contains("france"), "\(text)")
                #expect(audio.count > 44 + 3 * 22_050 * 2)
            }
        }
    }
}
