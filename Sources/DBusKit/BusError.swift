// SPDX-License-Identifier: GPL-2.0-or-later
import Glibc

/// A D-Bus error: a name such as `org.freedesktop.DBus.Error.InvalidArgs` and a message for people.
/// Method handlers throw it to send an error reply; calls throw it when the peer replies with one.
public struct BusError: Error, Sendable, Equatable, CustomStringConvertible {
    public var name: String
    public var message: String

    public init(name: String, message: String) {
        self.name = name
        self.message = message
    }

    public var description: String { "\(name): \(message)" }

    /// The name of the error for a request refused because a limit was reached.
    public static let limitsExceeded = "org.freedesktop.DBus.Error.LimitsExceeded"

    public static func invalidArgs(_ message: String) -> BusError {
        BusError(name: "org.freedesktop.DBus.Error.InvalidArgs", message: message)
    }

    public static func failed(_ message: String) -> BusError {
        BusError(name: "org.freedesktop.DBus.Error.Failed", message: message)
    }

    /// A failure of an sd-bus call itself (negative errno), with what was being done.
    public static func system(_ code: Int32, _ what: String) -> BusError {
        let errno = code < 0 ? -code : code
        let text = String(cString: strerror(errno))
        return BusError(name: "org.freedesktop.DBus.Error.Failed", message: "\(what): \(text)")
    }
}
