// SPDX-License-Identifier: GPL-2.0-or-later

/// Why an update was refused before the glasses were touched, in a sentence; the daemon's error
/// mapping names it on the bus.
public struct UpdateRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Reason: Sendable, Equatable {
        /// An image that is not usable (unreadable, corrupt, not for these glasses).
        case image
        /// Options that make no sense.
        case arguments
        /// No images to install.
        case notFound
        /// An update runs, or the glasses are answering.
        case busy
        case notPaired
        /// The glasses are not connected and idle.
        case notConnected
        /// Below the battery an update needs, unless forced.
        case batteryLow
        /// A file the caller may not have glassd open for it.
        case accessDenied
        /// Cancel in a phase that may not be stopped.
        case notCancellable
        /// What glassd keeps of updates could not be read.
        case recordsUnreadable
    }

    public var reason: Reason
    public var message: String
    public var description: String { message }

    public init(_ reason: Reason, _ message: String) {
        self.reason = reason
        self.message = message
    }

    public static func image(_ message: String) -> UpdateRefusal { UpdateRefusal(.image, message) }
    public static func arguments(_ message: String) -> UpdateRefusal { UpdateRefusal(.arguments, message) }
}

/// An update step that failed for a reason said in a sentence.
public struct UpdateFailure: Error, Sendable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
