// SPDX-License-Identifier: GPL-2.0-or-later
import AssistantEngine
import Audio
import Logging
import Synchronization

/// Speech made from text: 16-bit PCM, mono, little-endian at `SpeechAudio.outputRate` (16 kHz),
/// in pieces as the server makes it.
public protocol SpeechVoice: Sendable {
    func speak(_ text: String) async throws -> AsyncThrowingStream<[UInt8], any Error>
}

/// The voice is off for the rest of the run (its server has no speech endpoint): said once in
/// the log when it went off, then thrown without a word.
public struct SpeechVoiceOff: Error, Equatable {
    public init() {}
}

/// An OpenAI-compatible speech endpoint (`POST /v1/audio/speech`): its WAV or 24 kHz PCM
/// decoded and resampled to 16 kHz as it streams. A server without that endpoint (404/405,
/// `.notConfigured`) turns the voice off for the rest of the run, with one log line.
public final class SpeechServerVoice: SpeechVoice {
    let client: SpeechClient
    let logger: Logger
    private let off = Mutex(false)

    public init(client: SpeechClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// Several answers may find out at once: only the first says so.
    private func turnOff(because why: String) {
        let first = off.withLock { off in
            defer { off = true }
            return !off
        }
        if first { logger.notice("answers are not spoken for the rest of this run: \(why)") }
    }

    public func speak(_ text: String) async throws -> AsyncThrowingStream<[UInt8], any Error> {
        let input: SpeechAudio.Input = client.config.format == .pcm ? .pcm(rate: 24_000) : .wav
        if off.withLock({ $0 }) { throw SpeechVoiceOff() }
        let audio: SpeechAudioStream
        do {
            audio = try await client.speak(text)
        } catch {
            guard case .notConfigured(let why) = error else { throw error }
            turnOff(because: why)
            throw SpeechVoiceOff()
        }
        let (out, sink) = AsyncThrowingStream.makeStream(of: [UInt8].self)
        let task = Task {
            do {
                var decoder = try SpeechAudio(input)
                for try await bytes in audio {
                    let samples = try decoder.feed(bytes)
                    if !samples.isEmpty { sink.yield(SpeechAudio.littleEndian(samples)) }
                }
                let rest = try decoder.finish()
                if !rest.isEmpty { sink.yield(SpeechAudio.littleEndian(rest)) }
                sink.finish()
            } catch {
                sink.finish(throwing: error)
            }
        }
        sink.onTermination = { _ in
            task.cancel()
            audio.cancel()
        }
        return out
    }
}

/// Speaking answers on glasses that have a speaker: the voice, the speaker's volume (0…100), and
/// whether the wearer's voice may cut an answer off.
public struct SpeechOut: Sendable {
    public var voice: any SpeechVoice
    public var volume: Int
    /// The wearer's voice stops an answer being spoken, on glasses that hear over their own
    /// speech (an echo canceller); otherwise only a tap does.
    public var bargeInByVoice: Bool

    public init(voice: any SpeechVoice, volume: Int, bargeInByVoice: Bool = true) {
        self.voice = voice
        self.volume = volume
        self.bargeInByVoice = bargeInByVoice
    }
}
