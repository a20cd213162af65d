// SPDX-License-Identifier: GPL-2.0-or-later
import CPocketSphinx
import Foundation

/// pocketsphinx's keyphrase search over 16 kHz 16-bit mono audio: `feed` says whether the phrase
/// was just heard. Owned by one thread (SpotterThread): the decoder is not thread-safe.
public final class PhraseSpotter {
    public static let sampleRate = 16_000
    public let phrase: String
    private let config: OpaquePointer
    private let decoder: OpaquePointer

    public convenience init(_ settings: WakeSettings) throws(WakeError) {
        try self.init(
            phrase: settings.phrase, model: settings.model, phoneLoopPenalty: settings.sensitivity.phoneLoopPenalty,
            threshold: settings.sensitivity.threshold)
    }

    /// With pocketsphinx's own knobs (`-kws_plp`, `-kws_threshold`), for measuring other levels.
    public init(phrase: String, model: String, phoneLoopPenalty: String, threshold: String) throws(WakeError) {
        let phrase = try WakeSettings.normalized(phrase)
        self.phrase = phrase
        let acoustic = model + "/en-us"
        let dictionary = model + "/cmudict-en-us.dict"
        for path in [acoustic + "/mdef", dictionary] where !FileManager.default.fileExists(atPath: path) {
            throw .model("\(path) is missing (install pocketsphinx-en-us)")
        }
        let arguments = [
            "-hmm", acoustic, "-dict", dictionary, "-logfn", "/dev/null",
            "-kws_plp", phoneLoopPenalty, "-kws_threshold", threshold,
        ]
        guard let config = Self.parse(arguments) else { throw .model("pocketsphinx refused its settings") }
        guard let decoder = ps_init(config) else {
            cmd_ln_free_r(config)
            throw .model("pocketsphinx could not load \(model)")
        }
        // Checked before the properties are set: a throw after that would run deinit as well.
        func fail(_ error: WakeError) -> WakeError {
            ps_free(decoder)
            cmd_ln_free_r(config)
            return error
        }
        for word in phrase.split(separator: " ") {
            guard let phones = ps_lookup_word(decoder, String(word)) else { throw fail(.unknownWord(String(word))) }
            free(phones)
        }
        guard ps_set_keyphrase(decoder, "wake", phrase) == 0, ps_set_search(decoder, "wake") == 0,
            ps_start_utt(decoder) == 0
        else { throw fail(.model("pocketsphinx would not search for \"\(phrase)\"")) }
        self.config = config
        self.decoder = decoder
    }

    deinit {
        ps_end_utt(decoder)
        ps_free(decoder)
        cmd_ln_free_r(config)
    }

    /// Takes the next samples; true when the phrase ended in them (or just before: the search
    /// reports a few frames late). The search then starts afresh, so one saying is one wake.
    public func feed(_ samples: [Int16]) -> Bool {
        guard !samples.isEmpty else { return false }
        samples.withUnsafeBufferPointer { buffer in
            _ = ps_process_raw(decoder, buffer.baseAddress, buffer.count, 0, 0)
        }
        guard ps_get_hyp(decoder, nil) != nil else { return false }
        restart()
        return true
    }

    /// Forgets what it heard (a question took the microphone meanwhile).
    public func restart() {
        ps_end_utt(decoder)
        ps_start_utt(decoder)
    }

    private static func parse(_ arguments: [String]) -> OpaquePointer? {
        var pointers = arguments.map { strdup($0) }
        defer { pointers.forEach { free($0) } }
        return pointers.withUnsafeMutableBufferPointer { buffer in
            cmd_ln_parse_r(nil, ps_args(), Int32(buffer.count), buffer.baseAddress, 1)
        }
    }
}
