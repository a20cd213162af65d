// SPDX-License-Identifier: GPL-2.0-or-later
import AssistantEngine
import GlassdConfig
import HTTPKit
import Product

extension Daemon {
    /// Answers spoken on glasses with a speaker, through `[speech_out]`'s server (by default the
    /// assistant's); nil when `speak = "never"` or no server is known. "always" speaks on the
    /// glasses' speaker as "speaker" does: glasses without one stay silent.
    static func speechOut(_ config: Config, chatKey: String?, transport: any HTTPTransport) -> SpeechOut? {
        let settings = config.speechOut
        guard settings.speak != .never, let baseURL = settings.baseURL ?? config.baseURL else { return nil }
        let client = SpeechClient(
            config: SpeechServerConfig(
                baseURL: baseURL, model: settings.model, voice: settings.voice, format: settings.responseFormat == .pcm ? .pcm : .wav,
                apiKey: APIKey.speechOutKey(config: config, chatKey: chatKey), timeout: .seconds(config.timeoutSeconds)),
            transport: transport)
        return SpeechOut(voice: SpeechServerVoice(client: client), volume: settings.volume)
    }
}
