// SPDX-License-Identifier: GPL-2.0-or-later

/// Where the wake phrase is listened for.
public enum WakeSource: String, Sendable, Equatable, CaseIterable {
    /// The glasses stream their microphone while idle (8 kHz): it costs their battery.
    case glasses
    /// The host's default microphone (PipeWire, PulseAudio or ALSA).
    case host
}

/// How readily the spotter takes a sound for the phrase: more wakes, and more false ones. Each
/// level is pocketsphinx's phone-loop penalty and detection threshold, chosen on espeak-ng
/// fixtures (Scripts/bench-wake measures each).
public enum WakeSensitivity: String, Sendable, Equatable, CaseIterable {
    case low, normal, high

    /// -kws_plp: how much the garbage model (a loop of any phones) is penalised.
    public var phoneLoopPenalty: String {
        switch self {
        case .low: "1e-8"
        case .normal: "1e-12"
        case .high: "1e-14"
        }
    }

    /// -kws_threshold: how far the phrase must beat the garbage model. One value for all levels:
    /// on the fixtures a stronger penalty gained more phrases per false wake than a lower threshold.
    public var threshold: String { "1e-1" }
}

/// `[wake]` in glassd.conf.
public struct WakeSettings: Sendable, Equatable {
    public static let defaultModel = "/usr/share/pocketsphinx/model/en-us"

    public var phrase: String
    public var source: WakeSource
    public var sensitivity: WakeSensitivity
    /// A pocketsphinx model directory: the acoustic model in `en-us/`, the dictionary in
    /// `cmudict-en-us.dict` (Debian's layout).
    public var model: String

    public init(
        phrase: String, source: WakeSource = .glasses, sensitivity: WakeSensitivity = .normal,
        model: String = WakeSettings.defaultModel
    ) {
        self.phrase = phrase
        self.source = source
        self.sensitivity = sensitivity
        self.model = model
    }

    /// The phrase as the dictionary spells it: lower case, words separated by one space, no
    /// punctuation ("Hey, Glasses!" is "hey glasses").
    public static func normalized(_ phrase: String) throws(WakeError) -> String {
        let words = phrase.lowercased().split { !($0.isLetter || $0 == "'") }
        guard !words.isEmpty else { throw .badPhrase("it has no words") }
        guard words.count <= 6, phrase.count <= 80 else { throw .badPhrase("it is longer than six words") }
        return words.joined(separator: " ")
    }
}
