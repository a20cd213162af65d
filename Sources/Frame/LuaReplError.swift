// SPDX-License-Identifier: GPL-2.0-or-later

/// Why an exchange with the Frame's Lua REPL failed.
public enum LuaReplError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The chunk is longer than one write allows (`FrameMTU.maxLuaString`).
    case chunkTooLong(Int, limit: Int)
    /// The chunk would be taken for something else (data, break, reset) or cut short (a NUL).
    case forbiddenChunk(String)
    /// The device printed a Lua error instead of the replies (the message as printed).
    case luaError(String)
    /// The replies did not come in time (`what` says to what).
    case timeout(String)
    /// No handshake reply after every attempt (break + probe).
    case noHandshake(attempts: Int)
    /// Notifications were lost (the reader fell behind): the replies cannot be trusted.
    case lostOutput
    /// The device answered, but not in the expected form.
    case unexpectedReply(String)
    /// The link ended.
    case closed
    /// The calling task was cancelled.
    case cancelled

    public var description: String {
        switch self {
        case .chunkTooLong(let n, let limit): "a \(n)-byte Lua chunk exceeds \(limit) bytes"
        case .forbiddenChunk(let why): "refused to send a Lua chunk: \(why)"
        case .luaError(let message): "the glasses raised \(message)"
        case .timeout(let what): "no reply to \(what) in time"
        case .noHandshake(let n): "the glasses' Lua REPL did not answer (\(n) attempts)"
        case .lostOutput: "output from the glasses was lost"
        case .unexpectedReply(let what): "unexpected reply: \(what)"
        case .closed: "the link closed"
        case .cancelled: "cancelled"
        }
    }
}
