// SPDX-License-Identifier: GPL-2.0-or-later
import CLC3

/// LC3 frames to 16-bit mono PCM, streaming. The bytes are a FIFO, as Halo's microphone reads them
/// (byte-accurate, not frame-aligned): a frame split across messages waits for its rest, and the
/// frames are re-cut by the format's fixed size. Any bytes decode: a frame liblc3 finds invalid is
/// replaced by its packet-loss concealment and counted.
///
/// Not Sendable, on purpose, as `LC3Encoder` (see there): one owner, handed over once at most.
public final class LC3Decoder {
    public let format: LC3Format
    /// The rate of the PCM out: the codec's or higher (liblc3 upsamples).
    public let pcmRate: Int
    /// Samples one frame gives, at `pcmRate`.
    public let samplesPerFrame: Int
    /// liblc3's algorithmic delay at `pcmRate`: an encoder's input sample i comes out at i + delay.
    public let delaySamples: Int
    /// Frames decoded as sent.
    public private(set) var framesDecoded = 0
    /// Frames liblc3 could not read (a corrupt bitstream): played as its concealment instead.
    public private(set) var framesInvalid = 0
    /// Lost frames filled in by `conceal()`.
    public private(set) var framesConcealed = 0
    private let memory: UnsafeMutableRawPointer
    private let decoder: lc3_decoder_t
    private var fifo: [UInt8] = []

    public init(format: LC3Format, pcmRate: Int? = nil) throws(LC3Error) {
        // The context is sized for the output rate (lc3.h).
        let context = try LC3Context(
            format, pcmRate: pcmRate, what: "a decoder", size: { lc3_decoder_size($0, $1) },
            setup: { lc3_setup_decoder($0, $1, $2, $3) })
        self.format = format
        self.pcmRate = context.pcmRate
        self.samplesPerFrame = format.samples(atRate: context.pcmRate)
        self.delaySamples = context.delay
        self.memory = context.memory
        self.decoder = context.handle
    }

    deinit { memory.deallocate() }

    /// Bytes received but not yet a whole frame.
    public var bufferedBytes: Int { fifo.count }

    /// Takes `bytes` in any split and gives the samples of every frame now whole (a multiple of
    /// `samplesPerFrame`, possibly none).
    public func decode(_ bytes: some Collection<UInt8>) -> [Int16] {
        fifo.append(contentsOf: bytes)
        let size = format.frameBytes
        let count = fifo.count / size
        guard count > 0 else { return [] }
        var out = [Int16](repeating: 0, count: count * samplesPerFrame)
        var decoded = 0
        var invalid = 0
        fifo.withUnsafeBufferPointer { frames in
            out.withUnsafeMutableBufferPointer { pcm in
                for k in 0..<count {
                    let result = lc3_decode(
                        decoder, frames.baseAddress! + k * size, Int32(size), LC3_PCM_FORMAT_S16,
                        pcm.baseAddress! + k * samplesPerFrame, 1)
                    // 1: the bitstream was invalid and liblc3 concealed it; -1 (wrong parameters,
                    // which init's checks rule out) writes nothing: that frame stays silent.
                    if result == 0 { decoded += 1 } else { invalid += 1 }
                }
            }
        }
        fifo.removeFirst(count * size)
        framesDecoded += decoded
        framesInvalid += invalid
        return out
    }

    /// One frame for a lost one (liblc3's packet-loss concealment: the last sound, fading out).
    /// Call where the frame was due; bytes already buffered stay and come after it.
    public func conceal() -> [Int16] {
        var out = [Int16](repeating: 0, count: samplesPerFrame)
        _ = out.withUnsafeMutableBufferPointer { pcm in
            lc3_decode(decoder, nil, Int32(format.frameBytes), LC3_PCM_FORMAT_S16, pcm.baseAddress!, 1)
        }
        framesConcealed += 1
        return out
    }

    /// Drops a partial frame (a new stream starts: the device's buffer was cleared).
    public func discardBuffered() { fifo.removeAll() }
}
