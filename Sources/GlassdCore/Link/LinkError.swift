// SPDX-License-Identifier: GPL-2.0-or-later

/// Why a pairing request failed.
public enum LinkError: Error, Sendable, Equatable {
    case invalidAddress(String)
    case noAdapter(String)
    case notFound(String)
    case alreadyPaired(String)
    case busy(String)
    case notPaired(String)
    case failed(String)

    public var message: String {
        switch self {
        case .invalidAddress(let m), .noAdapter(let m), .notFound(let m), .alreadyPaired(let m), .busy(let m),
            .notPaired(let m), .failed(let m):
            m
        }
    }
}
