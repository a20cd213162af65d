// SPDX-License-Identifier: GPL-2.0-or-later
import AssistantEngine

/// Why a question from the glasses got no answer, beyond the assistant's own errors.
public enum VoiceFailure: Error, Sendable, Equatable {
    /// The recording held no speech (or nothing at all).
    case noSpeech
    /// The transcription came back empty.
    case noWords
    /// The photo is not a whole JPEG (or too big).
    case photo(String)
    /// The glasses went away; `while` says during what.
    case disconnected(while: String)
    /// A tap on the glasses cancelled the question.
    case cancelled
    /// The glasses started a recording (or a photo) and then stopped sending it without its end.
    case recordingNeverEnded
    /// The embedded default backend serves no speech, and no `[transcription]` server is set.
    case cannotHear
    /// The embedded default backend's model is text only.
    case cannotSee
    /// The embedded speech model knows English only: no translator mode.
    case cannotTranslate

    /// For the glasses' display.
    public var wording: String {
        switch self {
        case .noSpeech: "I did not hear a question. Tap and speak."
        case .noWords: "I could not make out any words. Tap to try again."
        case .photo: "The photo did not arrive whole. Hold to try again."
        case .recordingNeverEnded: "The recording broke off. Tap to try again."
        case .cannotHear: "The offline model cannot hear. Set up a speech server."
        case .cannotSee: "The offline model cannot see photos. Set up a vision model."
        case .cannotTranslate: "The offline speech model knows only English. Set up a speech server to translate."
        case .disconnected, .cancelled: ""
        }
    }

    /// Any failure of a question, as words for the glasses (empty: nothing to say).
    public static func glassesWording(_ error: any Error) -> String {
        switch error {
        case let failure as VoiceFailure: failure.wording
        case let failure as AssistantError: GlassesWording.text(for: failure)
        case is CancellationError: ""
        default: "Something went wrong in glassd."
        }
    }
}
