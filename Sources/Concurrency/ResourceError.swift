// SPDX-License-Identifier: GPL-2.0-or-later
import Glibc

/// A system resource glassd could not get (a descriptor, a thread, a library handle): the call
/// that failed, what it was for, and its errno (0 when the call sets none). Resource exhaustion
/// is a failure to report, never a reason to trap.
public struct ResourceError: Error, Sendable, Equatable, CustomStringConvertible {
    public var call: String
    public var purpose: String
    public var errno: Int32

    public init(call: String, purpose: String, errno: Int32) {
        self.call = call
        self.purpose = purpose
        self.errno = errno
    }

    public var description: String {
        let reason = errno == 0 ? "" : ": \(String(cString: strerror(errno)))"
        return "\(call) for \(purpose) failed\(reason)"
    }
}
