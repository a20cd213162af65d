// SPDX-License-Identifier: GPL-2.0-or-later
import CSpeexDSP

/// speexdsp's mono integer resampler, streaming. Its filter delays the output; `flush()` pushes
/// the delayed tail out so the total output is exactly `input × outRate / inRate` samples.
final class Resampler {
    let inRate: Int
    let outRate: Int
    private let state: OpaquePointer
    private var consumed = 0  // input samples so far
    private var produced = 0  // output samples so far

    init(from inRate: Int, to outRate: Int, quality: Int32 = SPEEX_RESAMPLER_QUALITY_VOIP) throws(AudioError) {
        guard inRate > 0, outRate > 0, let i = UInt32(exactly: inRate), let o = UInt32(exactly: outRate) else {
            throw .resamplerInit("bad rates \(inRate) → \(outRate)")
        }
        var err: Int32 = 0
        guard let state = speex_resampler_init(1, i, o, quality, &err), err == success else {
            throw .resamplerInit(String(cString: speex_resampler_strerror(err)))
        }
        // Without this the output starts with the filter's delay in zeros: the file would be
        // longer than what was said, and every time in it late.
        let skip = speex_resampler_skip_zeros(state)
        guard skip == success else {
            speex_resampler_destroy(state)
            throw .resamplerInit(String(cString: speex_resampler_strerror(skip)))
        }
        self.inRate = inRate
        self.outRate = outRate
        self.state = state
    }

    deinit { speex_resampler_destroy(state) }

    func process(_ input: [Int16]) -> [Int16] {
        consumed += input.count
        let output = run(input)
        produced += output.count
        return output
    }

    /// The output still held in the filter; call once, at the end of the stream.
    func flush() -> [Int16] {
        // Zeros push the held samples out; they carry no input of their own, so the output is cut at
        // what the real input is owed.
        let owed = max(0, consumed * outRate / inRate - produced)
        let latency = max(0, Int(speex_resampler_get_input_latency(state)))
        let tail = Array(run([Int16](repeating: 0, count: latency + 1)).prefix(owed))
        produced += tail.count
        return tail
    }

    private func run(_ input: [Int16]) -> [Int16] {
        guard !input.isEmpty else { return [] }
        // A margin past the exact ratio: the filter may release a sample it held from before.
        var output = [Int16](repeating: 0, count: input.count * outRate / inRate + 16)
        var done = 0
        var written = 0
        input.withUnsafeBufferPointer { inBuf in
            output.withUnsafeMutableBufferPointer { outBuf in
                while done < input.count, written < outBuf.count {
                    var inLen = UInt32(input.count - done)
                    var outLen = UInt32(outBuf.count - written)
                    let err = speex_resampler_process_int(
                        state, 0, inBuf.baseAddress! + done, &inLen, outBuf.baseAddress! + written, &outLen)
                    // Only misuse fails (bad pointer, overlap): drop the rest rather than stop the daemon.
                    guard err == success, inLen + outLen > 0 else { break }
                    done += Int(inLen)
                    written += Int(outLen)
                }
            }
        }
        output.removeLast(output.count - written)
        return output
    }
}

/// speex's error codes are an anonymous enum, which Swift imports as Int.
private let success = Int32(RESAMPLER_ERR_SUCCESS)
