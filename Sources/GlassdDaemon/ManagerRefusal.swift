// SPDX-License-Identifier: GPL-2.0-or-later

/// Why glassd refused a Manager1 call for what the caller asked (not the glasses, not a server).
enum ManagerRefusal: Error, Sendable, Equatable {
    /// Mode was set while an agent session runs: the session holds it.
    case agentHoldsMode
    /// Mode was set to none of the modes (`choices`, comma-separated).
    case unknownMode(choices: String)
    /// AnswerOf: no answer is kept for that query id.
    case noAnswerKept(queryID: String)
    /// Photo: no photo is kept for that query id.
    case noPhotoKept(queryID: String)
    /// A history call's argument is not an open descriptor.
    case notADescriptor
    /// QueryWith: an option it does not take.
    case unknownQueryOption(String)
    /// QueryWith: options that are not an a{sv}, or a value of the wrong type.
    case badQueryOptions
    /// Notify: what is wrong with the notification.
    case badNotification(String)
    /// SetNextEvent's event was not one (why).
    case badEvent(String)
    /// DismissNotification: no notification with that id is kept.
    case noNotification(UInt32)

    var message: String {
        switch self {
        case .agentHoldsMode: "An agent session runs: stop it to change the mode."
        case .unknownMode(let choices): "Mode must be one of: \(choices)."
        case .noAnswerKept(let id): "No answer is kept for the question \"\(id)\"."
        case .noPhotoKept(let id): "No photo is kept for the question \"\(id)\"."
        case .notADescriptor: "Expected an open file descriptor."
        case .unknownQueryOption(let name): "Unknown option \(name): QueryWith takes speak (b)."
        case .badQueryOptions: "QueryWith's options are an a{sv}: speak (b)."
        case .badNotification(let why): "Not a notification glassd can show: \(why)."
        case .badEvent(let why): "Not a calendar event glassd can show: \(why)."
        case .noNotification(let id): "No notification \(id) is kept."
        }
    }
}

/// Why glassd's own store failed a call; what went wrong is logged where it happened, and the
/// caller is told only which store.
enum StoreFailure: Error, Sendable, Equatable {
    case historyUnreadable
    case historyUnwritable
    case historyNotCleared
    case photosUnreadable

    var message: String {
        switch self {
        case .historyUnreadable: "The history could not be read."
        case .historyUnwritable: "The history could not be read or written."
        case .historyNotCleared: "Could not clear the conversation history."
        case .photosUnreadable: "The photos could not be read."
        }
    }
}
