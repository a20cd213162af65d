// SPDX-License-Identifier: GPL-2.0-or-later
import AssistantEngine
import GlassdConfig
import HTTPKit
import Logging
import Product

extension Daemon {
    /// Answers spoken on glasses with a speaker, through `[speech_out]`'s server (by default the
    /// assistant's); nil when `speak = "never"` or no server is known. "always" speaks on the
    /// glasses' speaker as "speaker" does: glassd is a system service, which does not reach the
    /// host's speakers (HostAudioAccess), so glasses without a speaker stay silent.
    static func speechOut(_ config: Config, chatKey: String?, transport: any HTTPTransport, logger: Logger) -> SpeechOut? {
        guard var server = speechOutServer(config) else { return nil }
        server.apiKey = APIKey.speechOutKey(config: config, chatKey: chatKey)
        let client = SpeechClient(config: server, transport: transport)
        return SpeechOut(
            voice: SpeechServerVoice(client: client, logger: logger), volume: config.speechOut.volume,
            bargeInByVoice: config.speechOut.bargeIn == .voice)
    }

    /// `[speech_out]`'s server without its key (for Manager1.Backend too); nil when answers are never spoken.
    static func speechOutServer(_ config: Config) -> SpeechServerConfig? {
        let settings = config.speechOut
        guard settings.speak != .never, let baseURL = settings.baseURL ?? config.baseURL else { return nil }
        return SpeechServerConfig(
            baseURL: baseURL, model: settings.model, voice: settings.voice, format: settings.responseFormat == .pcm ? .pcm : .wav,
            apiKey: nil, timeout: .seconds(config.timeoutSeconds))
    }
}
