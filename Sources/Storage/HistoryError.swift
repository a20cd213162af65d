// SPDX-License-Identifier: GPL-2.0-or-later

/// Why a history search, export or import failed.
public enum HistoryError: Error, Sendable, Equatable {
    /// The search has no words or SQLite refused it.
    case invalidQuery(String)
    /// An import line is not a message; nothing of that import was kept.
    case badLine(Int, String)
    /// The descriptor cannot be read or written (not open for that, closed early).
    case badDescriptor(String)
    /// Another export is running: one at a time, so stalled readers cannot take every database reader.
    case busy(String)
    /// The export's reader took nothing for too long: the export was stopped.
    case stalled(String)
    /// An import larger than glassd takes; nothing of it was kept.
    case tooLarge(String)
    /// The database failed.
    case failed(String)

    public var message: String {
        switch self {
        case .invalidQuery(let why), .badDescriptor(let why), .failed(let why), .busy(let why), .stalled(let why),
            .tooLarge(let why):
            why
        case .badLine(let line, let why): "Line \(line): \(why); nothing was imported."
        }
    }
}
