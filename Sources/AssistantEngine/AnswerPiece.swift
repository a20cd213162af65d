// SPDX-License-Identifier: GPL-2.0-or-later
import AnswerModel

/// One piece of an answer as it reaches the caller. A typed answer's text form is told apart
/// from streamed text: a display that lays the answer out shows its layout instead, while
/// callers that want plain text (AnswerDelta, History) take every piece's text alike.
public enum AnswerPiece: Sendable, Equatable {
    /// Text as the model streamed it.
    case text(String)
    /// The text form of `typed`, the typed parts that follow any text streamed before (the
    /// answer's last piece): everything their layout shows, as plain text.
    case textForm(String, of: TypedAnswer)

    /// The piece as plain text, whatever its kind.
    public var text: String {
        switch self {
        case .text(let text), .textForm(let text, _): text
        }
    }

    /// The piece as a voice says it: a typed answer's spoken form (no URL, no column bars), on a
    /// line of its own when its text form is.
    public var spoken: String {
        switch self {
        case .text(let text): text
        case .textForm(let text, let typed): (text.hasPrefix("\n") ? "\n" : "") + typed.spokenForm
        }
    }
}
