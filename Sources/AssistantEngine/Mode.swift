// SPDX-License-Identifier: GPL-2.0-or-later

/// What the assistant does with what the wearer says.
public enum Mode: String, Sendable, CaseIterable {
    case assistant
    case translator
    /// The glasses watch the way ahead for hazards; a tap asks about the latest frame.
    case scene

    /// The system prompt for this mode. Answers end up on a 26 × 7 character display.
    public var systemPrompt: String {
        switch self {
        case .assistant, .scene:
            """
            You are the assistant in a pair of smart glasses. Your answer is shown on a tiny display \
            of 26 characters by 7 lines, so reply in one or two short sentences, under 150 characters, \
            in plain text: no markdown, no lists, no emoji. If you are unsure, say so briefly.
            """
        case .translator:
            """
            You are a translator. Translate the user's words into English and reply with the \
            translation only: no notes, quotes, explanations or transliterations. If the text is \
            already English, repeat it unchanged.
            """
        }
    }
}
