// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation
@testable import GlassdConfig
@testable import GlassdDaemon
import TOMLCheck
import Testing

@Suite("Configuration", .timeLimit(.minutes(5)))
struct ConfigTests {
    @Test("a full file")
    func full() throws {
        let config = try Config.parse(
            """
            # comment
            [assistant]
            base_url = "http://localhost:11434/v1"
            chat_model = "llama3"
            transcription_model = "whisper-large"
            timeout_seconds = 90
            history_budget = 1200
            conversation_token_limit = 50000
            embedded = true
            api_key_file = "/etc/glassd/api-key"
            vision_model = "llava"

            [bluetooth]
            adapter = "hci1"

            [transcription]
            base_url = "http://localhost:8080/v1"
            language = "de"
            api_key_file = "/etc/glassd/speech-key"
            translates = true

            [voice]
            trailing_silence_ms = 600
            eager_pause_ms = 0
            statement_pause_ms = 400
            max_seconds = 20

            [photos]
            keep = 7

            [display]
            minimum_gap_ms = 0
            notification_wait_seconds = 600
            notifications_kept = 5
            glance_seconds = 20
            """)
        #expect(config.baseURL == "http://localhost:11434/v1")
        #expect(config.chatModel == "llama3")
        #expect(config.embedded)
        #expect(config.transcriptionModel == "whisper-large")
        #expect(config.timeoutSeconds == 90)
        #expect(config.historyBudget == 1200)
        #expect(config.conversationTokenLimit == 50000)
        #expect(config.apiKeyFile == "/etc/glassd/api-key")
        #expect(config.adapter == "hci1")
        #expect(config.visionModel == "llava")
        #expect(config.transcriptionURL == "http://localhost:8080/v1")
        #expect(config.transcriptionLanguage == "de")
        #expect(config.transcriptionKeyFile == "/etc/glassd/speech-key")
        #expect(config.transcriptionTranslates)
        #expect(config.trailingSilenceMS == 600)
        #expect(config.eagerPauseMS == 0)
        #expect(config.statementPauseMS == 400)
        #expect(config.maxUtteranceSeconds == 20)
        #expect(config.photosKept == 7)
        #expect(config.display.minimumGapMS == 0 && config.display.notificationWaitSeconds == 600)
        #expect(config.display.notificationsKept == 5 && config.display.glanceSeconds == 20)
    }

    @Test("defaults for what is left out")
    func defaults() throws {
        let config = try Config.parse("")
        #expect(config == Config())
        #expect(config.baseURL == nil)
        #expect(config.timeoutSeconds == 60)
        #expect(config.conversationTokenLimit == 0)
        #expect(!config.embedded)
        #expect(config.eagerPauseMS == 100, "the fast end of turn by default")
        #expect(config.statementPauseMS == 650)
        #expect(config.display.minimumGapMS == 300 && config.display.notificationWaitSeconds == 60)
        #expect(config.display.notificationsKept == 100 && config.display.glanceSeconds == 8)
    }

    @Test(
        "bad values are refused with the file, section and key named",
        arguments: [
            ("[assistant]\ntimeout_seconds = \"soon\"", "[assistant] timeout_seconds"),
            ("[assistant]\ntimeout_seconds = 0", "[assistant] timeout_seconds"),
            ("[assistant]\nbase_url = 5", "[assistant] base_url must be a string"),
            ("[assistant]\nbase_url = \"file:///etc/passwd\"", "base_url must be an http(s) URL"),
            ("[assistant]\nhistory_budget = -1", "[assistant] history_budget"),
            ("[assistant]\nconversation_token_limit = -5", "[assistant] conversation_token_limit"),
            ("[transcription]\nbase_url = \"ftp://x\"", "[transcription] base_url must be an http(s) URL"),
            ("[voice]\nmax_seconds = 31", "[voice] max_seconds"),
            ("[voice]\ntrailing_silence_ms = 10", "[voice] trailing_silence_ms"),
            ("[voice]\neager_pause_ms = -1", "[voice] eager_pause_ms"),
            ("[voice]\nstatement_pause_ms = 6000", "[voice] statement_pause_ms"),
            ("[photos]\nkeep = 0", "[photos] keep"),
            ("[display]\nnotifications_kept = 0", "[display] notifications_kept"),
            ("[display]\nminimum_gap_ms = \"fast\"", "[display] minimum_gap_ms"),
            ("assistant = 3", "[assistant] must be a table"),
            ("[assistant\nbase_url = 1", "line 1"),
        ])
    func badValues(text: String, expected: String) {
        do {
            _ = try Config.parse(text, file: "test.conf")
            Issue.record("accepted: \(text)")
        } catch {
            #expect(error.description.hasPrefix("test.conf: "))
            #expect(error.description.contains(expected), "\(error.description)")
        }
    }

    @Test("the default file may be missing; a named one may not")
    func missingFiles() throws {
        do {
            _ = try Config.load(path: "/nonexistent/glassd.conf")
            Issue.record("a missing named file was accepted")
        } catch {
            #expect(error.description == "cannot read config file /nonexistent/glassd.conf")
        }
        let dir = NSTemporaryDirectory() + "glassd-config-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try "[assistant]\nchat_model = \"x\"\n".write(toFile: dir + "/g.conf", atomically: true, encoding: .utf8)
        #expect(try Config.load(path: dir + "/g.conf").chatModel == "x")
    }

    @Test("the API key: credential first, then api_key_file, then GLASSD_API_KEY; whitespace trimmed")
    func apiKeyOrder() throws {
        let dir = NSTemporaryDirectory() + "glassd-key-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try "cred-key\n".write(toFile: dir + "/api-key", atomically: true, encoding: .utf8)
        try "  file-key \n".write(toFile: dir + "/file-key", atomically: true, encoding: .utf8)
        var config = Config()
        config.apiKeyFile = dir + "/file-key"
        let env = ["CREDENTIALS_DIRECTORY": dir, "GLASSD_API_KEY": "env-key"]
        #expect(APIKey.load(config: config, environment: env)?.key == "cred-key")
        #expect(APIKey.load(config: config, environment: ["GLASSD_API_KEY": "env-key"])?.key == "file-key")
        #expect(APIKey.load(config: Config(), environment: ["GLASSD_API_KEY": "env-key"])?.source == .environment)
        #expect(APIKey.load(config: Config(), environment: ["CREDENTIALS_DIRECTORY": "/nonexistent"]) == nil)
        #expect(APIKey.load(config: Config(), environment: ["GLASSD_API_KEY": "  "]) == nil)
    }

    @Test("the speech server gets its own key, the chat key only on the chat host, else none")
    func transcriptionKey() throws {
        let dir = NSTemporaryDirectory() + "glassd-key-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try "speech-key\n".write(toFile: dir + "/speech", atomically: true, encoding: .utf8)
        var config = Config()
        config.baseURL = "https://api.openai.com/v1"
        #expect(APIKey.transcriptionKey(config: config, chatKey: "chat") == "chat")
        config.transcriptionURL = "https://API.openai.com/v1/"
        #expect(APIKey.transcriptionKey(config: config, chatKey: "chat") == "chat")
        config.transcriptionURL = "http://localhost:8080/v1"
        #expect(APIKey.transcriptionKey(config: config, chatKey: "chat") == nil)
        config.transcriptionKeyFile = dir + "/speech"
        #expect(APIKey.transcriptionKey(config: config, chatKey: "chat") == "speech-key")
    }

    @Test("what toml++ would abort on is refused with its line first; valid shapes pass", arguments: [
        ("[\n", "a key is missing at line 1"),
        ("[assistant]\nchat_model = \"m\"\n[[ \t\n", "a key is missing at line 3"),
        ("# c\r\n  [\r\n", "a key is missing at line 2"),
        ("[=", "a key is missing at line 1"),
        ("c = [}, 1]\n", "a value is missing at line 1"),
        ("u.# = 1\n", "a key is missing at line 1"),
        ("x = \"open\n", "a string is not closed at line 1"),
        ("x = [1 2]\n", "array elements are separated by commas at line 1"),
        ("x = 1 y\n", "unexpected \"y\" at line 1"),
    ])
    func malformed(text: String, error: String) {
        #expect(throws: Config.Error(description: "glassd.conf: \(error)")) { try Config.parse(text) }
    }

    @Test("nested and multi-line arrays, multi-line strings with [ lines, inline tables, dotted and quoted keys pass the shape check")
    func validShapes() throws {
        let triple = String(repeating: "\"", count: 3)
        let text = [
            "[privacy]", "allowed_hosts = [", "  \"a\", # one", "  'b',", "]", "[assistant]",
            "system_prompt = \(triple)", "[", "not a header\(triple)", "\"quoted key\".x = 1",
            "t = { a = 1, b = [1, [2]], \"c\" = { d = true } }", "f = -1.5e3", "[[list]]", "n = 0x1F",
        ].joined(separator: "\n")
        try TOMLShape.check(text)
    }
}
