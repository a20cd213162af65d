// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import GlassdAPI
import GlassdCore

/// Why a question from the glasses got no answer, beyond the assistant's own errors.
enum VoiceFailure: Error, Sendable, Equatable {
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

    var busError: BusError {
        switch self {
        // The glasses, not a caller, sent these: named for what happened, not InvalidArgs.
        case .noSpeech: BusError(name: GlassdErrorName.noSpeech, message: "No speech was heard.")
        case .noWords: BusError(name: GlassdErrorName.noSpeech, message: "The speech was transcribed to no words.")
        case .photo(let why): BusError(name: GlassdErrorName.badPhoto, message: "The photo is not usable: \(why).")
        case .disconnected(let during):
            BusError(name: GlassdErrorName.notConnected, message: "The glasses disconnected while \(during).")
        case .cancelled: BusError(name: GlassdErrorName.cancelled, message: "The question was cancelled on the glasses.")
        case .recordingNeverEnded:
            BusError(name: GlassdErrorName.noSpeech, message: "The glasses stopped sending the recording before its end.")
        case .cannotHear:
            BusError(
                name: GlassdErrorName.notConfigured,
                message: "The embedded default backend does not transcribe speech: set [transcription] base_url in "
                    + "glassd.conf to a speech server (whisper.cpp's server, OpenAI), or use such a server for everything.")
        case .cannotTranslate:
            BusError(
                name: GlassdErrorName.notConfigured,
                message: "The embedded speech model (Whisper tiny.en) knows English only and cannot translate: set "
                    + "[transcription] base_url in glassd.conf to a multilingual speech server (whisper.cpp's with a "
                    + "multilingual model, OpenAI) for translator mode.")
        case .cannotSee:
            BusError(
                name: GlassdErrorName.notConfigured,
                message: "The embedded default model cannot see photos: set [assistant] base_url and vision_model in "
                    + "glassd.conf to a server with a vision model (OpenAI, Ollama with llava).")
        }
    }

    /// For the glasses' display.
    var wording: String {
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

    /// Any failure of a question, as a D-Bus error and as words for the glasses.
    static func describe(_ error: any Error) -> (bus: BusError, glasses: String) {
        switch error {
        case let failure as VoiceFailure: (failure.busError, failure.wording)
        case let failure as AssistantError: (ErrorMapping.busError(failure), GlassesWording.text(for: failure))
        case is CancellationError: (VoiceFailure.cancelled.busError, "")
        default: (BusError.failed("\(error)"), "Something went wrong in glassd.")
        }
    }
}
