// SPDX-License-Identifier: GPL-2.0-or-later
@testable import Product
import Testing

@Suite("Questions from the glasses", .timeLimit(.minutes(5)))
struct VoiceQueriesTests {
    @Test("a transcript of markers and punctuation only holds no words", arguments: [
        ("", true), ("  ", true), ("[BLANK_AUDIO]", true), (" (silence) ", true), ("[Music] ...", true),
        ("what is the time", false), ("[slow] what is the time", false), ("42", false), ("¿Qué?", false),
    ])
    func heardNothing(text: String, nothing: Bool) {
        #expect(VoiceQueries<ContinuousClock>.heardNothing(text) == nothing)
    }
}
