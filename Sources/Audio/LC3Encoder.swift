// SPDX-License-Identifier: GPL-2.0-or-later
import CLC3

/// 16-bit mono PCM to LC3 frames, streaming: any number of samples in, whole fixed-size frames out;
/// a partial frame waits for the next call, and `flush()` ends the stream with silence.
///
/// Not Sendable, on purpose: every call moves liblc3's state (the overlap between frames) and the
/// partial frame, so one owner calls it (the actor or task that streams the audio). Swift 6 checks
/// that: it can be handed to that owner once (`sending`, region isolation) but never shared. A
/// class, not a struct, because the state lives in memory liblc3 points into: one owner frees it once.
public final class LC3Encoder {
    public let format: LC3Format
    /// The rate of the PCM given to `encode`: the codec's or higher (liblc3 downsamples, so 24 kHz
    /// speech goes straight into a 16 kHz stream).
    public let pcmRate: Int
    /// Samples one frame takes, at `pcmRate`.
    public let samplesPerFrame: Int
    private let memory: UnsafeMutableRawPointer
    private let encoder: lc3_encoder_t
    /// liblc3's algorithmic delay at `pcmRate`: the decoder gives input sample i out at i + delay.
    private let delay: Int
    private var pending: [Int16] = []
    /// Since the last flush: samples taken in, frames given out.
    private var consumed = 0
    private var frames = 0

    public init(format: LC3Format, pcmRate: Int? = nil) throws(LC3Error) {
        // The context is sized for the input rate (lc3.h).
        let context = try LC3Context(
            format, pcmRate: pcmRate, what: "an encoder", size: { lc3_encoder_size($0, $1) },
            setup: { lc3_setup_encoder($0, $1, $2, $3) })
        self.format = format
        self.pcmRate = context.pcmRate
        self.samplesPerFrame = format.samples(atRate: context.pcmRate)
        self.memory = context.memory
        self.encoder = context.handle
        self.delay = context.delay
        pending.reserveCapacity(samplesPerFrame)
    }

    deinit { memory.deallocate() }

    /// The whole frames `samples` complete, back to back (a multiple of `format.frameBytes` bytes).
    public func encode(_ samples: some Collection<Int16>) -> [UInt8] {
        consumed += samples.count
        pending.append(contentsOf: samples)
        let count = pending.count / samplesPerFrame
        guard count > 0 else { return [] }
        let out = encodeFrames(count)
        pending.removeFirst(count * samplesPerFrame)
        return out
    }

    /// Ends the stream: the partial frame padded with silence, and silent frames until the codec's
    /// delay is out too, so a decoder gives back every sample given in. Empty when nothing is owed.
    public func flush() -> [UInt8] {
        let owed = consumed + delay
        let samplesOut = frames * samplesPerFrame
        let out: [UInt8]
        if consumed == 0 || samplesOut >= owed {
            out = []
        } else {
            let count = (owed - samplesOut + samplesPerFrame - 1) / samplesPerFrame
            pending.append(contentsOf: repeatElement(0, count: count * samplesPerFrame - pending.count))
            out = encodeFrames(count)
        }
        pending.removeAll(keepingCapacity: true)
        consumed = 0
        frames = 0
        return out
    }

    /// Codes the first `count` frames of `pending`.
    private func encodeFrames(_ count: Int) -> [UInt8] {
        let bytes = format.frameBytes
        var out = [UInt8](repeating: 0, count: count * bytes)
        pending.withUnsafeBufferPointer { pcm in
            out.withUnsafeMutableBufferPointer { frame in
                for k in 0..<count {
                    // -1 means wrong parameters, which init's checks rule out; the frame would stay
                    // zeros (a valid, near-silent frame) rather than stop the stream.
                    let result = lc3_encode(
                        encoder, LC3_PCM_FORMAT_S16, pcm.baseAddress! + k * samplesPerFrame, 1, Int32(bytes),
                        frame.baseAddress! + k * bytes)
                    assert(result == 0, "lc3_encode refused parameters init checked")
                }
            }
        }
        frames += count
        return out
    }
}
