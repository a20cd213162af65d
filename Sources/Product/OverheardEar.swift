// SPDX-License-Identifier: GPL-2.0-or-later
import Audio
import Foundation
import Glasses
import Logging

/// What the glasses overhear while they speak an answer (behind their echo canceller), listened
/// to for the wearer's voice: one SpeechOnset per answer (its noise floor learnt from the first
/// frame on), and once the wearer spoke, what was heard, for the question that follows.
struct OverheardEar<C: Clock> where C.Duration == Duration {
    /// A question that starts this soon after the wearer spoke over an answer begins with what
    /// was overheard: the glasses switch from overhearing to recording in that time, a second
    /// or less on a good link, many more on a congested one (or a loaded host), where a shorter
    /// wait lost the question's first words.
    static var window: Duration { .seconds(15) }

    private var onset: SpeechOnset?
    /// When the wearer last spoke over an answer.
    private var spokeAt: C.Instant?

    /// Adds what the glasses overheard; true once per answer, when the wearer starts to speak.
    mutating func hear(_ bytes: [UInt8], format: AudioFormat, at now: C.Instant, logger: Logger) -> Bool {
        guard let input = try? PCMInput(format) else { return false }
        // After a barge-in no question followed: what comes now is another answer's.
        let spent = spokeAt.map { now >= $0.advanced(by: Self.window) } ?? false
        if onset?.input != input || spent {
            spokeAt = nil
            do {
                onset = try SpeechOnset(input: input)
            } catch {
                logger.info("what the glasses overhear cannot be processed: \(error)")
                onset = nil
            }
        }
        guard let onset, onset.append(bytes) else { return false }
        spokeAt = now
        logger.info("the wearer spoke over the answer: it stops", metadata: ["level_dbfs": "\(Self.level(onset.heard.suffix(4_000)))"])
        return true
    }

    /// A question starts in `input`: what the wearer said before it, if they just spoke over an
    /// answer; the ear is then done.
    mutating func question(_ input: PCMInput, at now: C.Instant) -> [Int16]? {
        defer { forget() }
        guard let onset, onset.started, let at = spokeAt, now < at.advanced(by: Self.window), onset.input == input else { return nil }
        return onset.heard
    }

    /// The next answer is heard afresh.
    mutating func forget() {
        onset = nil
        spokeAt = nil
    }

    /// The RMS level of `samples` in dB below full scale, rounded (for the log).
    static func level(_ samples: ArraySlice<Int16>) -> Int {
        guard !samples.isEmpty else { return -96 }
        let power = samples.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(samples.count)
        return Int((10 * log10(max(power, 1e-3) / (32_768.0 * 32_768.0))).rounded())
    }
}
