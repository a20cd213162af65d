// SPDX-License-Identifier: GPL-2.0-or-later
import Audio
import Foundation

/// The glasses' microphone to the agent: the same processing as for a transcription (16-bit,
/// 16 kHz, denoised; see UtteranceRecorder), cut into pieces of equal length, each one websocket
/// message `{"audio":"<base64 of 16 kHz mono s16le>"}`. The recorder's end of speech is reported;
/// after it (or after its maximum length) the recorder takes no more audio, so neither does this.
/// Owned by one task, like the recorder it holds.
public final class AudioUplink {
    public static let sampleRate = 16_000

    public struct Output: Sendable, Equatable {
        /// Messages to send, in order.
        public var messages: [String]
        /// The recorder heard the end of speech in this call.
        public var ended: Bool
        /// This call's processed samples, for the level meter.
        public var samples: [Int16]
    }

    /// Samples per message.
    public let pieceSamples: Int
    private let recorder: UtteranceRecorder
    private var pending: [Int16] = []

    /// `piece` is kept within 20–100 ms, what the server's speech recognisers take well.
    public init(input: PCMInput, voice: VoiceSettings, piece: Duration = .milliseconds(40)) throws(AudioError) {
        recorder = try UtteranceRecorder(settings: voice, input: input)
        let clamped = min(max(piece, .milliseconds(20)), .milliseconds(100))
        pieceSamples = Int(clamped / .milliseconds(1)) * Self.sampleRate / 1000
    }

    /// One chunk from the glasses, any length.
    public func append(_ bytes: [UInt8]) -> Output {
        let events = recorder.append(bytes)
        let samples = recorder.takeProcessed()
        pending += samples
        let ended = events.contains { if case .ended = $0 { true } else { false } }
        return Output(messages: pieces(), ended: ended, samples: samples)
    }

    /// What is left, the last piece possibly shorter. Calling it again returns nothing.
    public func finish() -> [String] {
        _ = recorder.finish()
        pending += recorder.takeProcessed()
        var messages = pieces()
        if !pending.isEmpty {
            messages.append(Self.message(pending[...]))
            pending = []
        }
        return messages
    }

    private func pieces() -> [String] {
        var messages: [String] = []
        var start = 0
        while pending.count - start >= pieceSamples {
            messages.append(Self.message(pending[start..<start + pieceSamples]))
            start += pieceSamples
        }
        pending.removeFirst(start)
        return messages
    }

    /// Base64 needs no JSON escaping, so the message is written directly.
    static func message(_ samples: ArraySlice<Int16>) -> String {
        var bytes = [UInt8]()
        bytes.reserveCapacity(samples.count * 2)
        for s in samples {
            let u = UInt16(bitPattern: s)
            bytes.append(UInt8(u & 0xFF))
            bytes.append(UInt8(u >> 8))
        }
        return #"{"audio":""# + Data(bytes).base64EncodedString() + #""}"#
    }
}
