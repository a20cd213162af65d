// SPDX-License-Identifier: GPL-2.0-or-later
import CSpeexDSP

/// speexdsp's preprocessor on fixed-size frames: noise suppression and its voice-activity detector.
final class Preprocessor {
    let frameSize: Int
    private let state: OpaquePointer
    private let probStart: Int32
    private let probContinue: Int32
    private var wasSpeech = false

    /// - Parameters:
    ///   - probStart: speech probability (percent) for the VAD to go from silence to speech.
    ///   - probContinue: probability (percent) to stay in speech once there.
    ///   - noiseSuppress: most attenuation of the noise, in dB (negative).
    init(
        frameSize: Int, sampleRate: Int, probStart: Int32, probContinue: Int32, noiseSuppress: Int32
    ) throws(AudioError) {
        guard frameSize > 0, sampleRate > 0, let f = Int32(exactly: frameSize), let r = Int32(exactly: sampleRate),
            let state = speex_preprocess_state_init(f, r)
        else { throw .preprocessorInit }
        // The VAD's speech probability needs denoise on (it reads the noise estimate). Its
        // decision is made here from that probability, as speex's own VAD makes it (start, then
        // continue threshold): turning that on only adds a warning on stderr per recorder.
        let settings: [(Int32, Int32)] = [
            (SPEEX_PREPROCESS_SET_DENOISE, 1), (SPEEX_PREPROCESS_SET_NOISE_SUPPRESS, noiseSuppress),
            // Gain control would lift the noise between words and change the level under the VAD.
            (SPEEX_PREPROCESS_SET_AGC, 0), (SPEEX_PREPROCESS_SET_DEREVERB, 0),
        ]
        for (request, value) in settings where cspx_preprocess_set_int(state, request, value) != 0 {
            speex_preprocess_state_destroy(state)
            throw .preprocessorSetting(request: request)
        }
        // Only now: once every stored property is set, a throw would run deinit and free it twice.
        self.frameSize = frameSize
        self.state = state
        self.probStart = probStart
        self.probContinue = probContinue
    }

    deinit { speex_preprocess_state_destroy(state) }

    /// Denoises one frame in place (exactly `frameSize` samples) and returns the VAD's decision.
    func run(_ frame: inout [Int16]) -> Bool {
        precondition(frame.count == frameSize, "speex reads exactly frameSize samples")
        _ = frame.withUnsafeMutableBufferPointer { speex_preprocess_run(state, $0.baseAddress) }
        let probability = cspx_preprocess_get_int(state, SPEEX_PREPROCESS_GET_PROB)
        wasSpeech = probability > probStart || wasSpeech && probability > probContinue
        return wasSpeech
    }
}
