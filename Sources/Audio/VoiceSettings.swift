// SPDX-License-Identifier: GPL-2.0-or-later

/// When a spoken question ends.
public struct VoiceSettings: Sendable, Equatable {
    /// Silence after speech that ends the utterance.
    public var trailingSilence: Duration = .milliseconds(800)
    /// Speech needed, without a break, before the utterance counts as started: a click is shorter.
    public var minimumSpeech: Duration = .milliseconds(200)
    /// The utterance ends here whatever was said; audio past it is dropped.
    public var maximumLength: Duration = .seconds(30)

    public init(
        trailingSilence: Duration = .milliseconds(800), minimumSpeech: Duration = .milliseconds(200),
        maximumLength: Duration = .seconds(30)
    ) {
        self.trailingSilence = trailingSilence
        self.minimumSpeech = minimumSpeech
        self.maximumLength = maximumLength
    }
}
