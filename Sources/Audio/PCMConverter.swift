// SPDX-License-Identifier: GPL-2.0-or-later

/// The glasses' microphone bytes as 16 kHz 16-bit samples, streaming: what a speech model (the
/// wake phrase's spotter) takes. No denoising: the spotter has its own noise model.
public final class PCMConverter {
    public static let outputRate = 16_000
    private let source: MicrophoneSamples
    private let resampler: Resampler?

    public init(input: PCMInput) throws(AudioError) {
        source = try MicrophoneSamples(input)
        resampler = input.samplesRate == Self.outputRate ? nil : try Resampler(from: input.samplesRate, to: Self.outputRate)
    }

    public func convert(_ bytes: [UInt8]) -> [Int16] {
        let samples = source.samples(bytes[...])
        return resampler?.process(samples) ?? samples
    }
}

extension PCMConverter {
    /// Whole audio at another rate (a file's, a synthesiser's), through the same resampler.
    public static func resample(_ samples: [Int16], from inRate: Int, to outRate: Int) throws(AudioError) -> [Int16] {
        guard inRate != outRate else { return samples }
        let resampler = try Resampler(from: inRate, to: outRate)
        return resampler.process(samples) + resampler.flush()
    }
}
