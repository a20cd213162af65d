// SPDX-License-Identifier: GPL-2.0-or-later

/// Why a request to the link failed (pairing, scanning, reaching the bootloader); described by its message.
public enum LinkError: Error, Sendable, Equatable, CustomStringConvertible {
    case invalidAddress(String)
    case noAdapter(String)
    case notFound(String)
    case alreadyPaired(String)
    case busy(String)
    case notPaired(String)
    /// Seen advertising, but no connection attempt succeeded within the time allowed.
    case unreachable(String)
    /// The glasses refuse to pair: they keep a bond this computer lost, until it is reset on them.
    case bondLost(String)
    case failed(String)

    public var message: String {
        switch self {
        case .invalidAddress(let m), .noAdapter(let m), .notFound(let m), .alreadyPaired(let m), .busy(let m),
            .notPaired(let m), .unreachable(let m), .bondLost(let m), .failed(let m):
            m
        }
    }

    public var description: String { message }
}
