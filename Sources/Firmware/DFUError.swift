// SPDX-License-Identifier: GPL-2.0-or-later

/// Where a transfer is, for timeouts, progress and knowing when stopping is safe.
public enum DFUPhase: Sendable, Equatable, CustomStringConvertible {
    case setup
    case initPacket
    /// The image, object `index` (from 0).
    case image(object: Int)

    public var description: String {
        switch self {
        case .setup: "setting up"
        case .initPacket: "the init packet"
        case .image(let n): "image object \(n)"
        }
    }
}

/// Why a DFU transfer failed.
public enum DFUError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The bootloader refused a request.
    case remote(DFUOpcode, DFUResultCode, DFUExtendedError?)
    /// No answer (or no write completion) in time.
    case timeout(DFUPhase)
    /// The object's checksum stayed wrong after every resend.
    case crcMismatch(DFUPhase, attempts: Int)
    /// The link ended or failed a write.
    case linkLost
    /// Notifications were dropped: the exchange cannot be trusted.
    case lostNotifications
    /// A notification that is no well-formed response.
    case malformed(DFUResponseError)
    /// A well-formed answer to a request other than the one in flight.
    case unexpected(expected: DFUOpcode, got: DFUResponse)
    /// The bootloader's object limits cannot carry this package (e.g. an init packet over maxSize).
    case unsupported(String)
    /// `stop()` was asked and honoured at an object boundary.
    case stopped

    public var description: String {
        switch self {
        case .remote(let op, let result, let ext):
            "the bootloader refused \(op): \(result)" + (ext.map { " (\($0))" } ?? "")
        case .timeout(let phase): "no answer from the bootloader in time (\(phase))"
        case .crcMismatch(let phase, let n): "checksum still wrong after \(n) attempts (\(phase))"
        case .linkLost: "the link to the bootloader was lost"
        case .lostNotifications: "notifications from the bootloader were lost"
        case .malformed(let e): "malformed answer from the bootloader: \(e)"
        case .unexpected(let op, let got): "expected an answer to \(op), got \(got)"
        case .unsupported(let why): why
        case .stopped: "the update was stopped at an object boundary"
        }
    }
}
