// SPDX-License-Identifier: GPL-2.0-or-later

/// What the glasses' speaker takes: 16-bit PCM, or LC3 frames, at a rate.
public struct SpeakerFormat: Sendable, Equatable {
    public enum Codec: Sendable, Equatable {
        case pcm16
        /// Fixed-size frames (constant bitrate): `frameBytes` every `frameMicros`.
        case lc3(frameBytes: Int, frameMicros: Int)
    }

    public var codec: Codec
    public var sampleRate: Int

    public init(codec: Codec, sampleRate: Int) {
        self.codec = codec
        self.sampleRate = sampleRate
    }

    /// Bytes the speaker plays per second.
    public var bytesPerSecond: Int {
        switch codec {
        case .pcm16: sampleRate * 2
        case .lc3(let frameBytes, let frameMicros): frameBytes * 1_000_000 / frameMicros
        }
    }
}

/// How one spoken answer went, for the log: what glassd wrote and how much of it played, and
/// the glasses' own counters where their firmware gives them (Halo's `frame.speaker.stats()`).
public struct SpeakerReport: Sendable, Equatable {
    public var written: Int
    public var played: Duration
    /// Stopped before the end (a tap, or `stop`).
    public var cut: Bool
    /// The glasses' counters as `key=value` pairs, space-separated; empty when they keep none.
    public var device: String

    public init(written: Int, played: Duration, cut: Bool, device: String) {
        self.written = written
        self.played = played
        self.cut = cut
        self.device = device
    }
}

/// The wearer stopped the speech on the glasses (a tap, or speaking over it): write no more.
public struct SpeechCut: Error, Equatable {
    public init() {}
}

/// The glasses' speaker for one spoken answer: `begin`, `write` audio as it comes (paced to what
/// the speaker plays, so its buffer neither overflows nor runs dry), then `finish` (played out)
/// or `stop` (at once).
public protocol GlassesSpeaker: Sendable {
    var format: SpeakerFormat { get }
    /// Starts the speaker at `volume` (0…100); throws when the glasses cannot. With `listen`,
    /// glasses that can hear over their own speech (an echo canceller) send what they hear as
    /// `GlassesEvent.overheard` while it plays.
    func begin(volume: Int, listen: Bool) async throws
    /// Writes audio in `format`, waiting while the speaker's buffer is full. Throws `SpeechCut`
    /// once the wearer stopped the speech, and stops writing at once.
    func write(_ bytes: [UInt8]) async throws
    /// Waits until what was written has played, then stops the speaker.
    func finish() async throws -> SpeakerReport
    /// Stops the speaker at once: what has not played is dropped.
    func stop() async -> SpeakerReport
}
