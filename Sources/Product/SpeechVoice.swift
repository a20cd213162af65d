// SPDX-License-Identifier: GPL-2.0-or-later
import AssistantEngine
import Audio

/// Speech made from text: 16-bit PCM, mono, little-endian at `SpeechAudio.outputRate` (16 kHz),
/// in pieces as the server makes it.
public protocol SpeechVoice: Sendable {
    func speak(_ text: String) async throws -> AsyncThrowingStream<[UInt8], any Error>
}

/// An OpenAI-compatible speech endpoint (`POST /v1/audio/speech`): its WAV or 24 kHz PCM
/// decoded and resampled to 16 kHz as it streams.
public struct SpeechServerVoice: SpeechVoice {
    let client: SpeechClient

    public init(client: SpeechClient) { self.client = client }

    public func speak(_ text: String) async throws -> AsyncThrowingStream<[UInt8], any Error> {
        let input: SpeechAudio.Input = client.config.format == .pcm ? .pcm(rate: 24_000) : .wav
        let audio = try await client.speak(text)
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

/// Speaking answers on glasses that have a speaker: the voice, and the speaker's volume (0…100).
public struct SpeechOut: Sendable {
    public var voice: any SpeechVoice
    public var volume: Int

    public init(voice: any SpeechVoice, volume: Int) {
        self.voice = voice
        self.volume = volume
    }
}
