// SPDX-License-Identifier: GPL-2.0-or-later

/// A frame-energy speech gate in pure Swift, ANDed with speex's VAD because that VAD alone fails
/// on a stream's first seconds: its noise estimate starts empty, so any noise scores 99 % speech
/// and takes ~2 s to fall. On the fixtures, 3 s of white noise alone was speech for 1.5 s (at
/// thresholds 80/60) to 3 s (35/20), and in noisy speech the start was put at the first frame,
/// 1 s early. This gate follows the noise floor from the first frame instead: a frame is speech
/// when its energy stands `margin` over the floor; a short hangover bridges dips inside words.
struct EnergyGate: Sendable, Equatable {
    /// Power ratio over the floor that counts as speech (4 ≈ 6 dB).
    var margin = 4.0
    /// The floor's rise per louder frame (1.0093 ≈ 0.04 dB: 2 dB/s at 20 ms): a lasting louder
    /// noise is learnt, speech, which keeps dipping back to the floor, is not.
    var rise = 1.0093
    /// How far the floor moves towards a quieter frame, as a fraction.
    var fall = 0.5
    /// The floor never goes below 8-bit quantisation noise in 16-bit units (256² / 12 ≈ -53 dBFS):
    /// the Monocle's samples hold nothing quieter, and digital silence must not make every sound
    /// speech.
    var minimumFloor = 5461.0
    /// Frames still called speech after the energy drops (2 × 20 ms).
    var hangover = 2
    /// One-pole high-pass before the energy, y[n] = k·(y[n−1] + x[n] − x[n−1]); 0.94 cuts below
    /// ~150 Hz at 16 kHz. Rumble, wind and DC carry most of their energy there and voice little:
    /// without it 3 s of brown noise at the fixtures' level was 2 s of speech. (A pre-emphasis
    /// instead, 0.95, lost the first sentence under white noise at 5 dB SNR.)
    var highPass = 0.94

    private(set) var floor: Double?
    private var held = 0
    private var lastIn = 0.0
    private var lastOut = 0.0

    /// One frame's samples, before denoising; whether they look like speech.
    mutating func push(_ frame: [Int16]) -> Bool {
        guard !frame.isEmpty else { return false }
        var sum = 0.0
        for s in frame {
            let x = Double(s)
            lastOut = highPass * (lastOut + x - lastIn)
            lastIn = x
            sum += lastOut * lastOut
        }
        let power = sum / Double(frame.count)
        let current = max(floor ?? power, minimumFloor)
        let loud = power > current * margin
        floor = max(minimumFloor, power < current ? current + (power - current) * fall : current * rise)
        if loud {
            held = hangover
            return true
        }
        guard held > 0 else { return false }
        held -= 1
        return true
    }
}
