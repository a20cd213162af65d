// SPDX-License-Identifier: GPL-2.0-or-later
import Audio

/// Where a recording wakes the spotter: what `glassd --check-wake FILE` prints, so a user can try
/// a phrase and a sensitivity on their own voice, and what Scripts/bench-wake measures with.
public enum WakeCheck {
    /// The times (seconds from the start) at which `spotter` woke, fed as live audio comes: in 20 ms pieces.
    public static func wakes(in wav: [UInt8], spotter: PhraseSpotter) throws(AudioError) -> [Double] {
        let (samples, rate) = try WAV.decode(wav)
        let audio = try PCMConverter.resample(samples, from: rate, to: PhraseSpotter.sampleRate)
        let piece = PhraseSpotter.sampleRate / 50
        var found: [Double] = []
        var at = 0
        while at < audio.count {
            let end = min(at + piece, audio.count)
            if spotter.feed(Array(audio[at..<end])) { found.append(Double(end) / Double(PhraseSpotter.sampleRate)) }
            at = end
        }
        return found
    }
}
