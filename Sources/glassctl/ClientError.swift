// SPDX-License-Identifier: GPL-2.0-or-later
import GlassdAPI

/// What glassctl itself finds wrong, as opposed to an error glassd replied with (a BusError).
enum ClientError: Error, Equatable, CustomStringConvertible {
    /// PairedDevice is "/": there are no glasses to send to.
    case notPaired
    /// glassd's reply lacks what the call returns (what is missing).
    case unexpectedReply(String)
    /// A local read or write failed (what, with the system's reason).
    case localIO(String)
    /// glassd left the bus before the update it ran finished.
    case glassdLeftDuringUpdate

    var message: String {
        switch self {
        case .notPaired: "No glasses are paired."
        case .unexpectedReply(let what), .localIO(let what): what
        case .glassdLeftDuringUpdate: "glassd went away during the update"
        }
    }

    /// glassd's error name for the same condition, shown as glassd's own errors are, so a script
    /// that matches it sees one name whichever side found it.
    var glassdName: String? {
        if case .notPaired = self { GlassdErrorName.notPaired } else { nil }
    }

    var description: String { message }
}
