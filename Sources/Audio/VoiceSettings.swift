// SPDX-License-Identifier: GPL-2.0-or-later

/// When a spoken question ends.
public struct VoiceSettings: Sendable, Equatable {
    /// Silence after speech that ends the utterance.
    public var trailingSilence: Duration = .milliseconds(800)
    /// Silence after speech that may end it sooner: the words so far are looked at then, and a
    /// finished sentence ends the utterance at once. Not below trailingSilence: no such look.
    public var pauseSilence: Duration = .milliseconds(100)
    /// Silence after which a finished sentence that is not a question ends the utterance (a
    /// question ends at the pause): "who wrote the book" may go on after a breath with "Pride
    /// and Prejudice", "remind me to buy" with "milk". Not below trailingSilence: no such end.
    public var statementSilence: Duration = .milliseconds(650)
    /// Speech needed, without a break, before the utterance counts as started: a click is shorter.
    public var minimumSpeech: Duration = .milliseconds(200)
    /// The utterance ends here whatever was said; audio past it is dropped.
    public var maximumLength: Duration = .seconds(30)

    public init(
        trailingSilence: Duration = .milliseconds(800), minimumSpeech: Duration = .milliseconds(200),
        maximumLength: Duration = .seconds(30), pauseSilence: Duration = .milliseconds(100),
        statementSilence: Duration = .milliseconds(650)
    ) {
        self.trailingSilence = trailingSilence
        self.pauseSilence = pauseSilence
        self.statementSilence = statementSilence
        self.minimumSpeech = minimumSpeech
        self.maximumLength = maximumLength
    }
}
