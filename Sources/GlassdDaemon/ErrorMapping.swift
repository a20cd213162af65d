// SPDX-License-Identifier: GPL-2.0-or-later
import Agent
import AssistantEngine
import DBusKit
import GlassdAPI
import Glasses
import LinkKit
import Product
import Storage
import Updates

/// The one place where errors become D-Bus errors.
enum ErrorMapping {
    /// Any error a method or a question can end in.
    static func busError(for error: any Error) -> BusError {
        switch error {
        case let error as BusError: error
        case let error as AssistantError: busError(error)
        case let error as LinkError: busError(error)
        case let error as VoiceFailure: busError(error)
        case let error as SessionError: busError(error)
        case let error as AgentError: busError(error)
        case let error as HistoryError: busError(error)
        case let error as ManagerRefusal: busError(error)
        case let error as StoreFailure: busError(error)
        case let error as GlassesRefusal: busError(error)
        case let error as AgentStartRefusal: busError(error)
        case let error as AuthorizationRefusal: busError(error)
        case let error as UpdateRefusal: error.busError
        case is CancellationError: busError(VoiceFailure.cancelled)
        default: BusError.failed("\(error)")
        }
    }

    static func busError(_ error: SessionError) -> BusError {
        switch error {
        case .notConnected(let message): BusError(name: GlassdErrorName.notConnected, message: message)
        case .busy: BusError(name: GlassdErrorName.busy, message: "The glasses are busy with another question.")
        case .unsupported(let message): BusError(name: GlassdErrorName.notSupported, message: message)
        }
    }

    static func busError(_ error: VoiceFailure) -> BusError {
        switch error {
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
                message: "The embedded speech server has no multilingual model (Whisper base; Scripts/backend sets it up) and "
                    + "cannot translate: set "
                    + "[transcription] base_url in glassd.conf to a multilingual speech server (whisper.cpp's with a "
                    + "multilingual model, OpenAI) for translator mode.")
        case .cannotSee:
            BusError(
                name: GlassdErrorName.notConfigured,
                message: "The embedded default model cannot see photos: set [assistant] base_url and vision_model in "
                    + "glassd.conf to a server with a vision model (OpenAI, Ollama with llava).")
        }
    }

    static func busError(_ error: AssistantError) -> BusError {
        let name =
            switch error {
            case .invalidArgs: GlassdErrorName.invalidArgs
            case .notConfigured: GlassdErrorName.notConfigured
            case .unauthorized: GlassdErrorName.unauthorized
            case .rateLimited: GlassdErrorName.rateLimited
            case .upstreamFailed: GlassdErrorName.upstreamFailed
            case .timeout: GlassdErrorName.timeout
            case .internalFailure: GlassdErrorName.failed
            }
        return BusError(name: name, message: error.message)
    }

    static func busError(_ error: LinkError) -> BusError {
        let name =
            switch error {
            case .invalidAddress: GlassdErrorName.invalidArgs
            case .noAdapter: GlassdErrorName.noAdapter
            case .notFound: GlassdErrorName.notFound
            case .alreadyPaired: GlassdErrorName.alreadyPaired
            case .busy: GlassdErrorName.busy
            case .notPaired: GlassdErrorName.notPaired
            case .unreachable: GlassdErrorName.notConnected
            case .bondLost: GlassdErrorName.bondLost
            case .failed: GlassdErrorName.failed
            }
        return BusError(name: name, message: error.message)
    }
}

extension ErrorMapping {
    /// The server's workers limit is Busy (try later); every other refusal names the server's code.
    static func busError(_ error: AgentError) -> BusError {
        switch error {
        case .busy: BusError(name: GlassdErrorName.busy, message: error.message)
        default: BusError(name: GlassdErrorName.agentFailed, message: error.message)
        }
    }
}

extension ErrorMapping {
    /// The caller's input is InvalidArgs; the database's own failure is told only as that (and logged by the caller).
    static func busError(_ error: HistoryError) -> BusError {
        switch error {
        case .invalidQuery, .badLine, .badDescriptor, .tooLarge: BusError(name: GlassdErrorName.invalidArgs, message: error.message)
        case .busy: BusError(name: GlassdErrorName.busy, message: error.message)
        case .stalled: BusError(name: GlassdErrorName.timeout, message: error.message)
        case .failed: busError(StoreFailure.historyUnwritable)
        }
    }

    static func busError(_ error: ManagerRefusal) -> BusError {
        let name =
            switch error {
            case .agentHoldsMode: GlassdErrorName.busy
            case .unknownMode, .notADescriptor, .unknownQueryOption, .badQueryOptions, .badNotification,
                .badEvent: GlassdErrorName.invalidArgs
            case .noAnswerKept, .noPhotoKept, .noNotification: GlassdErrorName.notFound
            }
        return BusError(name: name, message: error.message)
    }

    static func busError(_ error: StoreFailure) -> BusError {
        BusError(name: GlassdErrorName.failed, message: error.message)
    }

    static func busError(_ error: GlassesRefusal) -> BusError {
        let name =
            switch error {
            case .updating: GlassdErrorName.busy
            case .notThePairedGlasses, .wentAway: GlassdErrorName.notConnected
            case .noBluetooth: GlassdErrorName.noAdapter
            case .textTooLong: GlassdErrorName.invalidArgs
            }
        return BusError(name: name, message: error.message)
    }

    static func busError(_ error: AgentStartRefusal) -> BusError {
        let name =
            switch error {
            case .noServer: GlassdErrorName.notConfigured
            case .sessionRuns: GlassdErrorName.busy
            case .optionsNotADictionary, .badGraph, .unknownOption: GlassdErrorName.invalidArgs
            }
        return BusError(name: name, message: error.message)
    }

    static func busError(_ error: AuthorizationRefusal) -> BusError {
        let name =
            switch error {
            case .needsAuthentication: GlassdErrorName.interactiveAuthorizationRequired
            case .unknownCaller, .polkitSilent, .polkitUnreadable, .notAuthorized: GlassdErrorName.accessDenied
            }
        return BusError(name: name, message: error.message)
    }
}

extension UpdateRefusal {
    var busError: BusError {
        let name =
            switch reason {
            case .image: GlassdErrorName.invalidImage
            case .arguments: GlassdErrorName.invalidArgs
            case .notFound: GlassdErrorName.notFound
            case .busy: GlassdErrorName.busy
            case .notPaired: GlassdErrorName.notPaired
            case .notConnected: GlassdErrorName.notConnected
            case .batteryLow: GlassdErrorName.batteryLow
            case .accessDenied: GlassdErrorName.accessDenied
            case .notCancellable: GlassdErrorName.notCancellable
            case .recordsUnreadable: GlassdErrorName.failed
            }
        return BusError(name: name, message: message)
    }
}
