// SPDX-License-Identifier: GPL-2.0-or-later
import CLC3

/// liblc3's state for one encoder or decoder: memory it sizes for the PCM rate (`pcmRate`, the
/// codec's or a higher one liblc3 converts to and from), aligned to a pointer, and the handle it
/// sets up in it. The owner frees `memory` once, in its deinit.
struct LC3Context<Handle> {
    let pcmRate: Int
    let memory: UnsafeMutableRawPointer
    let handle: Handle
    /// liblc3's algorithmic delay at `pcmRate`, in samples.
    let delay: Int

    init(
        _ format: LC3Format, pcmRate: Int?, what: String, size: (Int32, Int32) -> UInt32,
        setup: (Int32, Int32, Int32, UnsafeMutableRawPointer) -> Handle?
    ) throws(LC3Error) {
        let rate = pcmRate ?? format.sampleRate
        guard LC3Format.sampleRates.contains(rate), rate >= format.sampleRate else {
            throw .unsupportedPCMRate(pcm: rate, codec: format.sampleRate)
        }
        let micros = Int32(format.frameDuration.microseconds)
        let bytes = Int(size(micros, Int32(rate)))
        guard bytes > 0 else { throw .setupFailed("\(what) for \(format) at \(rate) Hz") }
        let memory = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: MemoryLayout<UnsafeRawPointer>.alignment)
        guard let handle = setup(micros, Int32(format.sampleRate), Int32(rate), memory),
            Int(lc3_frame_samples(micros, Int32(rate))) == format.samples(atRate: rate)
        else {
            memory.deallocate()
            throw .setupFailed("\(what) for \(format) at \(rate) Hz")
        }
        self.pcmRate = rate
        self.memory = memory
        self.handle = handle
        delay = max(0, Int(lc3_delay_samples(micros, Int32(rate))))
    }
}
