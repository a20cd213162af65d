// SPDX-License-Identifier: GPL-2.0-or-later

/// Turns a text-to-speech server's audio, fed as it streams in, into 16 kHz mono 16-bit samples.
/// The bytes may be split anywhere: inside the WAV header, inside a sample. A streamed WAV's
/// RIFF and data sizes are not trusted to be known: 0 and 0xFFFFFFFF (and espeak-ng's
/// 0x7FFFF000 on --stdout) mean "to the end of the stream". Pure apart from speexdsp's resampler.
public struct SpeechAudio {
    /// What the server sends.
    public enum Input: Sendable, Equatable {
        /// A RIFF/WAVE stream: 16-bit PCM, mono or stereo (mixed down), any rate.
        case wav
        /// Raw s16le mono at this rate (OpenAI's `pcm` is 24 kHz).
        case pcm(rate: Int)
    }

    public static let outputRate = 16_000
    /// The most header (chunks before the audio, what is kept of them) taken before the data.
    static let maxHeaderBytes = 64 * 1024

    private enum Stage {
        /// Gathering the 12-byte RIFF/WAVE preamble, then each chunk's 8-byte head.
        case preamble
        case chunkHead
        /// In a chunk's body: `fmt ` kept, others skipped.
        case fmtBody(size: Int)
        case skip(remaining: Int)
        /// Samples; nil remaining: to the end.
        case data(remaining: Int?)
        /// After a sized data chunk: what follows is skipped.
        case trailer
    }

    private let input: Input
    private var stage: Stage
    private var pending: [UInt8] = []
    private var headerBytes = 0
    private var channels = 1
    private var resampler: Resampler?
    private var rate: Int?
    private var finished = false

    public init(_ input: Input) throws(AudioError) {
        self.input = input
        switch input {
        case .wav:
            stage = .preamble
        case .pcm(let rate):
            stage = .data(remaining: nil)
            try setRate(rate)
        }
    }

    /// The source's rate, once known (a WAV's after its fmt chunk).
    public var sourceRate: Int? { rate }

    /// The 16 kHz samples these bytes complete; an error for what is not audio this takes (the
    /// stream should then be dropped: later bytes are not read).
    public mutating func feed(_ bytes: [UInt8]) throws(AudioError) -> [Int16] {
        guard !finished else { return [] }
        pending += bytes
        var samples: [Int16] = []
        while true {
            switch stage {
            case .preamble:
                guard pending.count >= 12 else { return samples }
                guard pending[0..<4].elementsEqual("RIFF".utf8), pending[8..<12].elementsEqual("WAVE".utf8) else {
                    throw fail("not a WAV stream")
                }
                try consumeHeader(12)
                stage = .chunkHead
            case .chunkHead:
                guard pending.count >= 8 else { return samples }
                let id = String(decoding: pending[0..<4], as: UTF8.self)
                let size = Int(pending[4]) | Int(pending[5]) << 8 | Int(pending[6]) << 16 | Int(pending[7]) << 24
                try consumeHeader(8)
                switch id {
                case "fmt ":
                    guard size >= 16, size <= 1024 else { throw fail("a WAV fmt chunk of \(size) bytes") }
                    stage = .fmtBody(size: size)
                case "data":
                    guard rate != nil else { throw fail("a WAV stream without its format first") }
                    // Streamed: the size is a placeholder (or as large as a file can be).
                    let open = size == 0 || size >= 0x7FFF_0000
                    stage = .data(remaining: open ? nil : size)
                default:
                    // LIST, fact, ...: skipped, padded to an even size.
                    try countHeader(size + size % 2)
                    stage = .skip(remaining: size + size % 2)
                }
            case .fmtBody(let size):
                let padded = size + size % 2
                guard pending.count >= padded else { return samples }
                try readFormat(pending[0..<size])
                pending.removeFirst(padded)
                stage = .chunkHead
            case .skip(let remaining):
                let n = min(remaining, pending.count)
                pending.removeFirst(n)
                guard remaining - n == 0 else {
                    stage = .skip(remaining: remaining - n)
                    return samples
                }
                stage = .chunkHead
            case .data(let remaining):
                let frame = 2 * channels
                var usable = pending.count - pending.count % frame
                if let remaining { usable = min(usable, remaining - remaining % frame) }
                samples += convert(usable)
                guard let remaining else { return samples }
                let left = remaining - usable
                if left >= frame {
                    stage = .data(remaining: left)
                    return samples
                }
                // A sized chunk that ends inside a frame: those bytes are no sample.
                let drop = min(left, pending.count)
                pending.removeFirst(drop)
                if left - drop > 0 {
                    stage = .data(remaining: left - drop)
                    return samples
                }
                stage = .trailer
            case .trailer:
                pending.removeAll()
                return samples
            }
        }
    }

    /// The samples still held in the resampler; an error when the stream ended before any audio
    /// (a WAV cut inside its header). Call once, at the end.
    public mutating func finish() throws(AudioError) -> [Int16] {
        guard !finished else { return [] }
        finished = true
        switch stage {
        case .preamble, .chunkHead, .fmtBody, .skip:
            throw fail("a WAV stream that ended before its audio")
        case .data, .trailer:
            return resampler?.flush() ?? []
        }
    }

    /// Samples as s16le bytes.
    public static func littleEndian(_ samples: [Int16]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(samples.count * 2)
        for sample in samples {
            let bits = UInt16(bitPattern: sample)
            bytes.append(UInt8(truncatingIfNeeded: bits))
            bytes.append(UInt8(truncatingIfNeeded: bits >> 8))
        }
        return bytes
    }

    private func fail(_ what: String) -> AudioError { .unsupportedInput("speech audio: \(what)") }

    private mutating func consumeHeader(_ n: Int) throws(AudioError) {
        pending.removeFirst(n)
        try countHeader(n)
    }

    private mutating func countHeader(_ n: Int) throws(AudioError) {
        headerBytes += n
        guard headerBytes <= Self.maxHeaderBytes else { throw fail("more than 64 KiB of WAV header before the audio") }
    }

    private mutating func readFormat(_ fmt: ArraySlice<UInt8>) throws(AudioError) {
        let at = fmt.startIndex
        func u16(_ i: Int) -> Int { Int(fmt[at + i]) | Int(fmt[at + i + 1]) << 8 }
        let tag = u16(0)
        let channels = u16(2)
        let rate = u16(4) | u16(6) << 16
        let bits = u16(14)
        // WAVE_FORMAT_EXTENSIBLE (0xFFFE) carries its PCM subformat's GUID first two bytes at 24.
        let pcm = tag == 1 || (tag == 0xFFFE && fmt.count >= 26 && u16(24) == 1)
        guard pcm, bits == 16 else { throw fail("a WAV stream that is not 16-bit PCM (format \(tag), \(bits) bits)") }
        guard channels == 1 || channels == 2 else { throw fail("a WAV stream of \(channels) channels") }
        self.channels = channels
        try setRate(rate)
    }

    private mutating func setRate(_ rate: Int) throws(AudioError) {
        guard (4_000...384_000).contains(rate) else { throw fail("a sample rate of \(rate) Hz") }
        self.rate = rate
        resampler = rate == Self.outputRate ? nil : try Resampler(from: rate, to: Self.outputRate)
    }

    /// The first `count` pending bytes (whole frames) as mono samples at 16 kHz.
    private mutating func convert(_ count: Int) -> [Int16] {
        guard count > 0 else { return [] }
        var mono: [Int16] = []
        mono.reserveCapacity(count / (2 * channels))
        pending.withUnsafeBufferPointer { bytes in
            func sample(_ i: Int) -> Int32 { Int32(Int16(bitPattern: UInt16(bytes[i]) | UInt16(bytes[i + 1]) << 8)) }
            var i = 0
            while i < count {
                if channels == 2 {
                    mono.append(Int16((sample(i) + sample(i + 2)) / 2))
                } else {
                    mono.append(Int16(sample(i)))
                }
                i += 2 * channels
            }
        }
        pending.removeFirst(count)
        return resampler?.process(mono) ?? mono
    }
}
