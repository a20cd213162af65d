// SPDX-License-Identifier: GPL-2.0-or-later

/// Why a raw-REPL exchange failed.
public enum ReplError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No raw-REPL banner after every attempt to enter it.
    case noBanner(attempts: Int)
    /// The reply did not come in time (`what` says to what).
    case timeout(String)
    /// The command raised; the exception line of its traceback.
    case traceback(String)
    /// Incoming bytes were lost (the reader fell behind): the exchange cannot be trusted.
    case lostBytes
    /// The command holds a byte the REPL must never get (0x1C resets the device into safe mode).
    case forbiddenByte(UInt8)
    /// The command would not fit the device's receive ring.
    case commandTooLong(Int, limit: Int)
    /// The link ended.
    case closed
    /// The device answered, but not in the expected form.
    case unexpectedReply(String)

    public var description: String {
        switch self {
        case .noBanner(let n): "the glasses did not enter the raw REPL (\(n) attempts)"
        case .timeout(let what): "no reply to \(what) in time"
        case .traceback(let line): "the glasses raised \(line)"
        case .lostBytes: "bytes from the glasses were lost"
        case .forbiddenByte(let b): "refused to send byte 0x\(String(b, radix: 16)) to the REPL"
        case .commandTooLong(let n, let limit): "a \(n)-byte REPL command exceeds \(limit) bytes"
        case .closed: "the link closed"
        case .unexpectedReply(let what): "unexpected reply: \(what)"
        }
    }
}
