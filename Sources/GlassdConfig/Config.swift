// SPDX-License-Identifier: GPL-2.0-or-later
import Agent
import Foundation
import Skills
import TOMLCheck
import TOMLKit
import Wake

/// glassd.conf, read once at start-up.
public struct Config: Sendable, Equatable {
    public static let defaultPath = "/etc/glassd/glassd.conf"

    public var baseURL: String?
    /// `[assistant] kind`: `openai` (any OpenAI-compatible server) or `susi` (SUSI.AI's chat.json).
    public var assistantKind = "openai"
    /// `[assistant] show_answer_tool`: offer the model the `show_answer` tool for lists, tables,
    /// links, places and numbers; nil: on, except for the embedded default model (too small to
    /// call tools well).
    public var showAnswerTool: Bool?
    public var chatModel = "gpt-4o-mini"
    /// `[assistant] embedded`: the server is the embedded default (Scripts/backend, a tiny model);
    /// only said in the log at start.
    public var embedded = false
    public var transcriptionModel = "whisper-1"
    /// The model for a photo and its question; nil: the chat model.
    public var visionModel: String?
    /// Where speech goes when not to `baseURL` (a local whisper.cpp while chat goes elsewhere).
    public var transcriptionURL: String?
    /// `[transcription] embedded`: that server is the embedded default (Scripts/backend's
    /// Whisper tiny.en): it knows English only and does not translate, unless
    /// `transcriptionTranslates`.
    public var transcriptionEmbedded = false
    /// `[transcription] translates`: the embedded speech server has a multilingual model too
    /// (Scripts/backend's Whisper base), which answers its /audio/translations.
    public var transcriptionTranslates = false
    /// The speech server's key, when it is another server than the chat one.
    public var transcriptionKeyFile: String?
    /// The spoken language (ISO-639-1), when known: faster and better transcriptions.
    public var transcriptionLanguage: String?
    /// Silence after speech that ends a spoken question, in milliseconds.
    public var trailingSilenceMS = 800
    /// Silence after speech at which the words so far are transcribed and a finished sentence
    /// ends the question, in milliseconds; 0: never (no eager requests, the trailing silence only).
    public var eagerPauseMS = 100
    /// Silence after which a finished sentence that is not a question ends a spoken question
    /// (a question ends at the eager pause), in milliseconds; from trailing_silence_ms up: never.
    public var statementPauseMS = 650
    /// The longest spoken question, in seconds.
    public var maxUtteranceSeconds = 30
    /// How many photos are kept (the oldest go).
    public var photosKept = 100
    /// `[display]`.
    public var display = DisplaySettings()
    public var timeoutSeconds = 60
    /// Characters of earlier conversation sent with each question.
    public var historyBudget = 8000
    /// Once the current conversation has used more tokens than this (as the server reported
    /// them), the next question starts a new one; 0: never.
    public var conversationTokenLimit = 0
    public var apiKeyFile: String?
    public var adapter: String?
    /// Seconds Pair("") scans for the strongest Monocle.
    public var scanTimeout = 10
    /// The cap of the reconnect backoff, in seconds.
    public var reconnectMaxSeconds = 60
    /// Where the wanted firmware and FPGA images and their manifest are; nil: `firmware` in the
    /// state directory.
    public var firmwareDirectory: String?
    /// Apply firmware and FPGA updates when the glasses connect, not only on Update.
    public var autoUpdate = false
    /// Below this battery level (percent) an update is refused unless forced.
    public var updateMinBattery = 20
    /// How long connection attempts to the glasses' bootloader go on once it advertises.
    public var bootloaderConnectSeconds = 60
    /// How long the glasses may take from a reset to ready again (a Halo's test boot: past it,
    /// the new image's app counts as not answering).
    public var updateRestartSeconds = 180
    /// `[privacy]`: keep every backend on this machine.
    var privacy = PrivacyPolicy()
    /// `[scene]`: seconds between frames in scene mode.
    public var sceneIntervalSeconds = 4
    /// `[scene]`: below this mean luminance (0...1) a frame is `dark`.
    public var sceneDarkThreshold = 0.15
    /// `[scene]`: below this variance of the Laplacian a frame is `blurry`.
    public var sceneBlurThreshold = 100.0
    /// `[scene]`: a frame within this many dHash bits of the last one sent is `unchanged`.
    public var sceneChangeBits = 10
    /// `[skills] enabled`: the local skills that answer before the model.
    public var skills: Set<SkillName> = Set(SkillName.allCases)
    /// `[agent]`: the TEN agent server; nil: StartAgent answers NotConfigured.
    public var agent: AgentSettings?
    /// `[wake]`: the wake phrase that starts a question as a tap would; nil: off (the default).
    public var wake: WakeSettings?
    /// `[speech_out]`: spoken answers (by default on glasses with a speaker).
    public var speechOut = SpeechOutSettings()

    public init() {}

    public struct Error: Swift.Error, Sendable, Equatable, CustomStringConvertible {
        public var description: String
    }

    /// Loads `path`. A missing file is fine only when it is the default one (nothing configured yet).
    public static func load(path: String?) throws(Error) -> Config {
        let file = path ?? defaultPath
        guard let data = FileManager.default.contents(atPath: file) else {
            if path == nil && !FileManager.default.fileExists(atPath: file) { return Config() }
            throw Error(description: "cannot read config file \(file)")
        }
        return try parse(String(decoding: data, as: UTF8.self), file: file)
    }

    public static func parse(_ text: String, file: String = "glassd.conf") throws(Error) -> Config {
        do {
            try TOMLShape.check(text)
        } catch {
            throw Error(description: "\(file): \(error.what) at line \(error.line)")
        }
        let table: TOMLTable
        do {
            table = try TOMLTable(string: text)
        } catch let error as TOMLParseError {
            throw Error(description: "\(file): \(error.description) at line \(error.source.begin.line)")
        } catch {
            throw Error(description: "\(file): \(error)")
        }
        var config = Config()
        let assistant = try section(table, "assistant", file: file)
        let bluetooth = try section(table, "bluetooth", file: file)
        let transcription = try section(table, "transcription", file: file)
        let voice = try section(table, "voice", file: file)
        let photos = try section(table, "photos", file: file)
        let update = try section(table, "update", file: file)
        let privacy = try section(table, "privacy", file: file)
        let scene = try section(table, "scene", file: file)
        config.agent = try agentSettings(try section(table, "agent", file: file), file: file)
        let skills = try section(table, "skills", file: file)
        let reader = Reader(file: file)
        config.wake = try wakeSettings(try section(table, "wake", file: file), reader: reader, file: file)
        config.speechOut = try speechOutSettings(try section(table, "speech_out", file: file), reader: reader, file: file)
        config.display = try displaySettings(try section(table, "display", file: file), reader: reader)
        config.baseURL = try reader.url(assistant, "assistant", "base_url")
        config.assistantKind = try reader.string(assistant, "assistant", "kind") ?? config.assistantKind
        guard ["openai", "susi"].contains(config.assistantKind) else {
            throw Error(description: "\(file): [assistant] kind must be \"openai\" or \"susi\", not \"\(config.assistantKind)\"")
        }
        config.visionModel = try reader.string(assistant, "assistant", "vision_model")
        config.transcriptionURL = try reader.url(transcription, "transcription", "base_url")
        config.transcriptionLanguage = try reader.string(transcription, "transcription", "language")
        config.transcriptionEmbedded = try reader.bool(transcription, "transcription", "embedded") ?? false
        config.transcriptionTranslates = try reader.bool(transcription, "transcription", "translates") ?? false
        config.transcriptionKeyFile = try reader.string(transcription, "transcription", "api_key_file")
        config.trailingSilenceMS =
            try reader.int(voice, "voice", "trailing_silence_ms", in: 200...5000) ?? config.trailingSilenceMS
        config.eagerPauseMS = try reader.int(voice, "voice", "eager_pause_ms", in: 0...5000) ?? config.eagerPauseMS
        config.statementPauseMS =
            try reader.int(voice, "voice", "statement_pause_ms", in: 0...5000) ?? config.statementPauseMS
        config.maxUtteranceSeconds =
            try reader.int(voice, "voice", "max_seconds", in: 2...30) ?? config.maxUtteranceSeconds
        config.photosKept = try reader.int(photos, "photos", "keep", in: 1...100_000) ?? config.photosKept
        config.chatModel = try reader.string(assistant, "assistant", "chat_model") ?? config.chatModel
        config.embedded = try reader.bool(assistant, "assistant", "embedded") ?? false
        config.showAnswerTool = try reader.bool(assistant, "assistant", "show_answer_tool")
        config.transcriptionModel =
            try reader.string(assistant, "assistant", "transcription_model") ?? config.transcriptionModel
        config.timeoutSeconds =
            try reader.int(assistant, "assistant", "timeout_seconds", in: 1...3600) ?? config.timeoutSeconds
        config.historyBudget =
            try reader.int(assistant, "assistant", "history_budget", in: 0...1_000_000) ?? config.historyBudget
        config.conversationTokenLimit =
            try reader.int(assistant, "assistant", "conversation_token_limit", in: 0...1_000_000_000)
            ?? config.conversationTokenLimit
        config.apiKeyFile = try reader.string(assistant, "assistant", "api_key_file")
        config.adapter = try reader.string(bluetooth, "bluetooth", "adapter")
        config.scanTimeout = try reader.int(bluetooth, "bluetooth", "scan_timeout", in: 1...300) ?? config.scanTimeout
        config.reconnectMaxSeconds =
            try reader.int(bluetooth, "bluetooth", "reconnect_max_seconds", in: 1...3600) ?? config.reconnectMaxSeconds
        config.firmwareDirectory = try reader.string(update, "update", "firmware_dir")
        config.autoUpdate = try reader.bool(update, "update", "auto") ?? config.autoUpdate
        config.updateMinBattery = try reader.int(update, "update", "min_battery", in: 0...100) ?? config.updateMinBattery
        config.bootloaderConnectSeconds =
            try reader.int(update, "update", "bootloader_connect_seconds", in: 1...600) ?? config.bootloaderConnectSeconds
        config.updateRestartSeconds =
            try reader.int(update, "update", "restart_seconds", in: 10...600) ?? config.updateRestartSeconds
        config.sceneIntervalSeconds =
            try reader.int(scene, "scene", "interval_seconds", in: 1...3600) ?? config.sceneIntervalSeconds
        config.sceneDarkThreshold =
            try reader.double(scene, "scene", "dark_threshold", in: 0...1) ?? config.sceneDarkThreshold
        config.sceneBlurThreshold =
            try reader.double(scene, "scene", "blur_threshold", in: 0...1_000_000) ?? config.sceneBlurThreshold
        config.sceneChangeBits = try reader.int(scene, "scene", "change_bits", in: 0...64) ?? config.sceneChangeBits
        if let names = try reader.strings(skills, "skills", "enabled") {
            config.skills = Set(try names.map { name throws(Error) -> SkillName in
                guard let skill = SkillName(rawValue: name) else {
                    let known = SkillName.allCases.map(\.rawValue).joined(separator: ", ")
                    throw Error(description: "\(file): [skills] enabled has \"\(name)\"; the skills are \(known)")
                }
                return skill
            })
        }
        config.privacy.localOnly = try reader.bool(privacy, "privacy", "local_only") ?? false
        config.privacy.allowedHosts = try reader.strings(privacy, "privacy", "allowed_hosts") ?? []
        // Before anything is looked up or connected: the daemon does not start.
        try config.privacy.check(
            [
                ("[assistant] base_url", config.baseURL), ("[transcription] base_url", config.transcriptionURL),
                ("[agent] base_url", config.agent?.baseURL), ("[agent] websocket_url", config.agent?.websocketURL),
                ("[speech_out] base_url", config.speechOut.baseURL),
            ]
                .compactMap { setting, url in url.map { (setting, $0) } }, file: file)
        return config
    }

    /// Manager1.Privacy: where questions and speech may go (see `PrivacyPolicy.name(for:)`).
    public var privacyName: String {
        privacy.name(
            for: [baseURL, transcriptionURL, agent?.baseURL, agent?.websocketURL, speechOut.baseURL].compactMap { $0 })
    }

    private static func section(_ table: TOMLTable, _ name: String, file: String) throws(Error) -> TOMLTable? {
        guard let value = table[name] else { return nil }
        guard let section = value.table else { throw Error(description: "\(file): [\(name)] must be a table") }
        return section
    }

    struct Reader {
        var file: String

        func string(_ table: TOMLTable?, _ section: String, _ key: String) throws(Error) -> String? {
            guard let value = table?[key] else { return nil }
            guard let s = value.string else { throw Error(description: "\(file): [\(section)] \(key) must be a string") }
            return s
        }

        /// An http(s) URL with a host.
        func url(_ table: TOMLTable?, _ section: String, _ key: String) throws(Error) -> String? {
            guard let url = try string(table, section, key) else { return nil }
            guard let parsed = URL(string: url), ["http", "https"].contains(parsed.scheme?.lowercased() ?? ""),
                parsed.host != nil
            else { throw Error(description: "\(file): [\(section)] \(key) must be an http(s) URL, not \"\(url)\"") }
            return url
        }

        func strings(_ table: TOMLTable?, _ section: String, _ key: String) throws(Error) -> [String]? {
            guard let value = table?[key] else { return nil }
            guard let array = value.array, let strings = Optional(array.compactMap(\.string)), strings.count == array.count
            else { throw Error(description: "\(file): [\(section)] \(key) must be a list of strings") }
            return strings
        }

        /// A number; a whole one is taken as well.
        func double(_ table: TOMLTable?, _ section: String, _ key: String, in range: ClosedRange<Double>) throws(Error) -> Double? {
            guard let value = table?[key] else { return nil }
            guard let n = value.double ?? value.int.map(Double.init), range.contains(n) else {
                throw Error(description: "\(file): [\(section)] \(key) must be a number in \(range)")
            }
            return n
        }

        func bool(_ table: TOMLTable?, _ section: String, _ key: String) throws(Error) -> Bool? {
            guard let value = table?[key] else { return nil }
            guard let b = value.bool else { throw Error(description: "\(file): [\(section)] \(key) must be true or false") }
            return b
        }

        func int(_ table: TOMLTable?, _ section: String, _ key: String, in range: ClosedRange<Int>) throws(Error) -> Int? {
            guard let value = table?[key] else { return nil }
            guard let n = value.int, range.contains(n) else {
                throw Error(description: "\(file): [\(section)] \(key) must be a whole number in \(range)")
            }
            return n
        }
    }
}
