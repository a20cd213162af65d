// SPDX-License-Identifier: GPL-2.0-or-later

/// When a spoken question ends.
public struct VoiceSettings: Sendable, Equatable {
    /// Silence after speech that ends the utterance.
    public var trailingSilence: Duration = .milliseconds(800)
    /// Silence after speech that may end it sooner: the words so far are looked at then, and a
    /// finished sentence ends the utterance at once. Not below trailingSilence: no such look.
    public var pauseSilence: Duration = .milliseconds(160)
    /// Speech needed, without a break, before the utterance counts as started: a click is shorter.
    public var minimumSpeech: Duration = .milliseconds(200)
    /// The utterance ends here whatever was said; audio past it is dropped.
    public var maximumLength: Duration = .seconds(30)

    public init(
        trailingSilence: Duration = .milliseconds(800), minimumSpeech: Duration = .milliseconds(200),
        maximumLength: Duration = .seconds(30), pauseSilence: Duration = .milliseconds(160)
    ) {
        self.trailingSilence = trailingSilence
        self.pauseSilence = pauseSilence
        self.minimumSpeech = minimumSpeech
        self.maximumLength = maximumLength
    }
}
