// SPDX-License-Identifier: GPL-2.0-or-later

/// Why a history search, export or import failed.
public enum HistoryError: Error, Sendable, Equatable {
    /// The search has no words or SQLite refused it.
    case invalidQuery(String)
    /// An import line is not a message; nothing of that import was kept.
    case badLine(Int, String)
    /// The descriptor cannot be read or written (not open for that, closed early).
    case badDescriptor(String)
    /// The database failed.
    case failed(String)

    public var message: String {
        switch self {
        case .invalidQuery(let why), .badDescriptor(let why), .failed(let why): why
        case .badLine(let line, let why): "Line \(line): \(why); nothing was imported."
        }
    }
}
