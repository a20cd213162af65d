// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation

/// The byte stream under a WebSocket: a plain TCP socket for `ws://`, libcurl's verified TLS
/// stream for `wss://`. Non-blocking both: readiness of `fd` says when to try again. Used by one
/// thread at a time: the connecting thread, then the event loop's.
protocol ByteChannel: AnyObject {
    /// What to poll.
    var fd: Int32 { get }
    /// TLS: once a write was tried, OpenSSL holds its record, and the same bytes must be offered
    /// again, whole, before any other (a plain socket takes anything at any time).
    var retriesWritesAsIs: Bool { get }
    func send(_ bytes: UnsafeRawBufferPointer) -> ChannelResult
    /// `.done(0)` is the end of the stream.
    func receive(_ buffer: UnsafeMutableRawBufferPointer) -> ChannelResult
    /// Best effort, never waits: for a last close frame on the way out.
    func sendNow(_ bytes: [UInt8])
    func close()
}

enum ChannelResult {
    case done(Int)
    case wouldBlock
    case failed(String)
}

/// A connected, non-blocking TCP socket.
final class PlainChannel: ByteChannel {
    let fd: Int32
    var retriesWritesAsIs: Bool { false }

    init(fd: Int32) { self.fd = fd }

    func send(_ bytes: UnsafeRawBufferPointer) -> ChannelResult {
        let n = Glibc.send(fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL))
        if n >= 0 { return .done(n) }
        return errno == EAGAIN || errno == EINTR ? .wouldBlock : .failed(String(cString: strerror(errno)))
    }

    func receive(_ buffer: UnsafeMutableRawBufferPointer) -> ChannelResult {
        let n = read(fd, buffer.baseAddress, buffer.count)
        if n >= 0 { return .done(n) }
        return errno == EAGAIN || errno == EINTR ? .wouldBlock : .failed(String(cString: strerror(errno)))
    }

    func sendNow(_ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
    }

    func close() { Glibc.close(fd) }
}

@available(*, unavailable)
extension PlainChannel: Sendable {}
