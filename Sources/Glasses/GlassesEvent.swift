// SPDX-License-Identifier: GPL-2.0-or-later

/// The samples of a recording from the glasses: mono, signed; 16-bit ones little-endian.
public struct AudioFormat: Sendable, Equatable, CustomStringConvertible {
    /// How the samples are sent: as they are, or coded.
    public enum Codec: Sendable, Equatable {
        case pcm
        /// 8-bit G.711 µ-law codes, one per sample.
        case muLaw
        /// LC3 frames of `frameBytes` every `frameMicros`, as a byte stream (split anywhere).
        case lc3(frameBytes: Int, frameMicros: Int)
    }

    public var sampleRate: Int
    /// PCM's sample width; 8 for µ-law; 16 for LC3 (what it decodes to).
    public var bits: Int
    public var codec: Codec

    public init(sampleRate: Int, bits: Int, codec: Codec = .pcm) {
        self.sampleRate = sampleRate
        self.bits = bits
        self.codec = codec
    }

    public var isMuLaw: Bool { codec == .muLaw }

    /// LC3's frame size and duration, nil for PCM.
    public var lc3Frame: (bytes: Int, micros: Int)? {
        if case .lc3(let bytes, let micros) = codec { (bytes, micros) } else { nil }
    }

    public var description: String {
        switch codec {
        case .pcm: "\(sampleRate) Hz \(bits)-bit"
        case .muLaw: "\(sampleRate) Hz \(bits)-bit µ-law"
        case .lc3(let frameBytes, let frameMicros): "LC3 \(sampleRate) Hz, \(frameBytes)-byte frames of \(frameMicros) µs"
        }
    }
}

/// What the wearer does on the glasses, whatever their kind: the product logic reads only this.
public enum GlassesEvent: Sendable, Equatable {
    /// A question starts: with `photo`, its photo's bytes first (`photoData`…, `photoEnd`), then
    /// the recording in `audio`'s format.
    case questionStart(photo: Bool, audio: AudioFormat)
    /// A piece of the question's photo (JPEG).
    case photoData([UInt8])
    case photoEnd
    /// Samples of the question.
    case audio([UInt8])
    /// The recording ended.
    case audioEnd
    /// A scene frame asked for with `requestSceneFrame()`, whole; nil when the glasses sent one
    /// too large to be a photo (`PhotoAssembly.maxBytes`).
    case sceneFrame([UInt8]?)
    /// A tap the glasses report by itself (Frame); the Monocle's scripts act on their taps alone.
    case tap
    /// The wearer cancelled the answer with a tap.
    case cancelled
    /// What idle glasses hear while listening for the wake phrase (`setListening`), in `format`.
    case listening([UInt8], format: AudioFormat)
    /// What the glasses hear while they speak an answer (a speaker begun with `listen`), behind
    /// their echo canceller, in `format`: the wearer may be speaking over the answer.
    case overheard([UInt8], format: AudioFormat)
    /// The wearer asked for the glance (each kind's own gesture on idle glasses).
    case glance
}

/// What a session reports, in order.
public enum SessionEvent: Sendable, Equatable {
    case status(SessionStatus)
    case glasses(GlassesEvent)
}
