// SPDX-License-Identifier: GPL-2.0-or-later
import TOMLKit

/// `[speech_out]`: where spoken answers are made (an OpenAI-compatible `/audio/speech`) and when.
public struct SpeechOutSettings: Sendable, Equatable {
    /// When answers are spoken.
    public enum Speak: String, Sendable, CaseIterable {
        /// On glasses that have a speaker (the default): voice answers, and typed ones whose
        /// caller asks (Manager1.QueryWith speak).
        case speaker
        /// As `speaker` for now: glassd is a system service and does not reach the host's
        /// speakers, so glasses without a speaker stay silent.
        case always
        /// Nothing is spoken anywhere.
        case never
    }

    /// What the server is asked to send: a WAV (its rate in the header), or OpenAI's raw PCM
    /// (s16le mono at 24 kHz).
    public enum Format: String, Sendable, CaseIterable {
        case wav
        case pcm
    }

    /// What stops an answer being spoken.
    public enum BargeIn: String, Sendable, CaseIterable {
        /// A tap, or the wearer speaking over it, on glasses that hear over their own speech
        /// (an echo canceller: Halo); elsewhere a tap.
        case voice
        /// A tap only: the microphone stays off while the glasses speak.
        case tap
    }

    public var speak = Speak.speaker
    public var bargeIn = BargeIn.voice
    /// nil: the [assistant] base_url.
    public var baseURL: String?
    public var model = "tts-1"
    public var voice = "alloy"
    public var responseFormat = Format.wav
    /// The glasses' speaker volume, 0...100.
    public var volume = 60
    /// The speech server's key file; nil: as for transcription, the chat key when the speech
    /// server is the chat server's host, else none.
    public var apiKeyFile: String?
    /// The server is the embedded backend's espeak-ng (Scripts/backend), as Scripts/run writes it:
    /// a robotic voice, there to try spoken answers out offline.
    public var embedded = false

    public init() {}
}

extension Config {
    static func speechOutSettings(_ table: TOMLTable?, reader: Reader, file: String) throws(Config.Error) -> SpeechOutSettings {
        var settings = SpeechOutSettings()
        guard let table else { return settings }
        func fail(_ what: String) -> Config.Error { Config.Error(description: "\(file): [speech_out] \(what)") }
        let known: Set = ["speak", "barge_in", "base_url", "model", "voice", "response_format", "volume", "api_key_file", "embedded"]
        if let unknown = table.keys.sorted().first(where: { !known.contains($0) }) { throw fail("has no setting \(unknown)") }
        if let name = try reader.string(table, "speech_out", "speak") {
            guard let speak = SpeechOutSettings.Speak(rawValue: name) else {
                throw fail("speak must be \"speaker\", \"always\" or \"never\", not \"\(name)\"")
            }
            settings.speak = speak
        }
        if let name = try reader.string(table, "speech_out", "barge_in") {
            guard let bargeIn = SpeechOutSettings.BargeIn(rawValue: name) else {
                throw fail("barge_in must be \"voice\" or \"tap\", not \"\(name)\"")
            }
            settings.bargeIn = bargeIn
        }
        settings.baseURL = try reader.url(table, "speech_out", "base_url")
        if let model = try reader.string(table, "speech_out", "model") {
            guard !model.isEmpty else { throw fail("model must name a model") }
            settings.model = model
        }
        if let voice = try reader.string(table, "speech_out", "voice") {
            guard !voice.isEmpty else { throw fail("voice must name a voice") }
            settings.voice = voice
        }
        if let name = try reader.string(table, "speech_out", "response_format") {
            guard let format = SpeechOutSettings.Format(rawValue: name) else {
                throw fail("response_format must be \"wav\" or \"pcm\", not \"\(name)\"")
            }
            settings.responseFormat = format
        }
        settings.volume = try reader.int(table, "speech_out", "volume", in: 0...100) ?? settings.volume
        settings.apiKeyFile = try reader.string(table, "speech_out", "api_key_file")
        settings.embedded = try reader.bool(table, "speech_out", "embedded") ?? false
        return settings
    }
}
