// SPDX-License-Identifier: GPL-2.0-or-later
import AssistantEngine
import Foundation
@testable import GlassdConfig
@testable import GlassdDaemon
import Testing

@Suite("Configuration: [speech_out]", .timeLimit(.minutes(5)))
struct SpeechOutConfigTests {
    @Test("left out: spoken on glasses with a speaker, tts-1 and alloy, WAV, volume 60, the assistant's server")
    func defaults() throws {
        let settings = try Config.parse("").speechOut
        #expect(settings == SpeechOutSettings())
        #expect(settings.speak == .speaker && settings.baseURL == nil && settings.model == "tts-1")
        #expect(settings.voice == "alloy" && settings.responseFormat == .wav && settings.volume == 60)
        #expect(settings.apiKeyFile == nil && !settings.embedded && settings.bargeIn == .voice)
        #expect(try Config.parse("[speech_out]\n").speechOut == SpeechOutSettings())
    }

    @Test("every setting is read")
    func full() throws {
        let settings = try Config.parse(
            """
            [speech_out]
            speak = "always"
            barge_in = "tap"
            base_url = "http://127.0.0.1:8090/v1"
            model = "kokoro"
            voice = "af_sky"
            response_format = "pcm"
            volume = 0
            api_key_file = "/etc/glassd/tts-key"
            embedded = true
            """
        ).speechOut
        var expected = SpeechOutSettings()
        expected.speak = .always
        expected.bargeIn = .tap
        expected.baseURL = "http://127.0.0.1:8090/v1"
        expected.model = "kokoro"
        expected.voice = "af_sky"
        expected.responseFormat = .pcm
        expected.volume = 0
        expected.apiKeyFile = "/etc/glassd/tts-key"
        expected.embedded = true
        #expect(settings == expected)
        #expect(try Config.parse("[speech_out]\nspeak = \"never\"\nvolume = 100\n").speechOut.speak == .never)
    }

    @Test("unknown keys and bad values stop glassd with the file, the section and what is wrong")
    func wrong() {
        let cases: [(String, String)] = [
            ("[speech_out]\nspeed = 2\n", "glassd.conf: [speech_out] has no setting speed"),
            ("[speech_out]\nspeak = \"sometimes\"\n", "glassd.conf: [speech_out] speak must be \"speaker\", \"always\" or \"never\", not \"sometimes\""),
            ("[speech_out]\nspeak = true\n", "glassd.conf: [speech_out] speak must be a string"),
            ("[speech_out]\nbarge_in = \"never\"\n", "glassd.conf: [speech_out] barge_in must be \"voice\" or \"tap\", not \"never\""),
            ("[speech_out]\nresponse_format = \"mp3\"\n", "glassd.conf: [speech_out] response_format must be \"wav\" or \"pcm\", not \"mp3\""),
            ("[speech_out]\nvolume = 101\n", "glassd.conf: [speech_out] volume must be a whole number in 0...100"),
            ("[speech_out]\nvolume = -1\n", "glassd.conf: [speech_out] volume must be a whole number in 0...100"),
            ("[speech_out]\nvolume = \"loud\"\n", "glassd.conf: [speech_out] volume must be a whole number in 0...100"),
            ("[speech_out]\nbase_url = \"file:///tmp/x\"\n", "glassd.conf: [speech_out] base_url must be an http(s) URL, not \"file:///tmp/x\""),
            ("[speech_out]\nmodel = \"\"\n", "glassd.conf: [speech_out] model must name a model"),
            ("[speech_out]\nvoice = \"\"\n", "glassd.conf: [speech_out] voice must name a voice"),
            ("[speech_out]\nembedded = \"yes\"\n", "glassd.conf: [speech_out] embedded must be true or false"),
            ("[speech_out]\napi_key_file = 3\n", "glassd.conf: [speech_out] api_key_file must be a string"),
            ("speech_out = 3\n", "glassd.conf: [speech_out] must be a table"),
        ]
        for (text, message) in cases {
            #expect(throws: Config.Error(description: message)) { try Config.parse(text) }
        }
    }

    @Test("a key file's contents never show in an error: only its path")
    func keyNotInErrors() throws {
        let dir = NSTemporaryDirectory() + "glassd-tts-key-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try "sk-tts-secret-42\n".write(toFile: dir + "/key", atomically: true, encoding: .utf8)
        do {
            _ = try Config.parse("[speech_out]\napi_key_file = \"\(dir)/key\"\nvolume = 500\n")
            Issue.record("volume 500 was accepted")
        } catch {
            #expect(!error.description.contains("sk-tts-secret-42"))
        }
        var config = try Config.parse("[speech_out]\napi_key_file = \"\(dir)/key\"\n")
        #expect(APIKey.speechOutKey(config: config, chatKey: "chat") == "sk-tts-secret-42")
        #expect(!"\(config)".contains("sk-tts-secret-42"))
        // Without its own key: the chat key on the chat host (or with no URL of its own), else none.
        config.speechOut.apiKeyFile = nil
        config.baseURL = "https://api.openai.com/v1"
        #expect(APIKey.speechOutKey(config: config, chatKey: "chat") == "chat")
        config.speechOut.baseURL = "https://API.openai.com/v1/"
        #expect(APIKey.speechOutKey(config: config, chatKey: "chat") == "chat")
        config.speechOut.baseURL = "http://127.0.0.1:8090/v1"
        #expect(APIKey.speechOutKey(config: config, chatKey: "chat") == nil)
    }

    @Test("local_only refuses a remote speech server, naming the setting; its URL counts for Manager1.Privacy")
    func privacy() throws {
        let remote = """
            [assistant]
            base_url = "http://127.0.0.1:8080/v1"
            [speech_out]
            base_url = "https://tts.invalid/v1"
            """
        do {
            _ = try Config.parse(remote + "\n[privacy]\nlocal_only = true\n")
            Issue.record("a remote speech server was accepted")
        } catch {
            #expect(error.description.contains("[speech_out] base_url is https://tts.invalid/v1"), "\(error)")
        }
        #expect(try Config.parse(remote).privacyName == "cloud")
        #expect(try Config.parse(remote.replacingOccurrences(of: "https://tts.invalid", with: "http://localhost:9")).privacyName == "local")
    }

    @Test("speak = never: no voice at all; speaker and always: the voice, its server in Manager1.Backend when it is another, never its key")
    func wiring() throws {
        let chat = "[assistant]\nbase_url = \"http://127.0.0.1:8080/v1\"\nchat_model = \"m\"\n"
        #expect(Daemon.speechOutServer(try Config.parse(chat + "[speech_out]\nspeak = \"never\"\n")) == nil)
        #expect(Daemon.speechOutServer(try Config.parse("[speech_out]\nspeak = \"always\"\n")) == nil, "no server known")
        let own = try Config.parse(
            chat + "[speech_out]\nspeak = \"always\"\nbase_url = \"http://127.0.0.1:8090/v1\"\nmodel = \"kokoro\"\nvoice = \"af_sky\"\n")
        let server = try #require(Daemon.speechOutServer(own))
        #expect(server.baseURL == "http://127.0.0.1:8090/v1" && server.model == "kokoro" && server.voice == "af_sky")
        #expect(server.apiKey == nil)
        #expect(
            Daemon.backendDescription(own, nil, nil, voice: server).hasSuffix("; voice: http://127.0.0.1:8090/v1 kokoro (af_sky)"),
            "\(Daemon.backendDescription(own, nil, nil, voice: server))")
        // The chat server's own voice is not another server: Backend says nothing more.
        let shared = try Config.parse(chat)
        #expect(Daemon.speechOutServer(shared)?.baseURL == "http://127.0.0.1:8080/v1")
        #expect(!Daemon.backendDescription(shared, nil, nil, voice: Daemon.speechOutServer(shared)).contains("voice:"))
    }
}
