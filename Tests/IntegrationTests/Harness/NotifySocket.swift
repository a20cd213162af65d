// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation

/// A stand-in for systemd's notify socket: glassd sends READY=1 (and WATCHDOG=1) here.
final class NotifySocket: Sendable {
    let path: String
    private let fd: Int32

    init(path: String) throws {
        self.path = path
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, byte) in path.utf8.prefix(raw.count - 1).enumerated() { raw[i] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0 else { throw POSIXError(.EADDRINUSE) }
        // Bounded wait, so a daemon that never gets ready fails the test instead of hanging it.
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Waits (on a thread of its own: recv blocks) for a datagram containing `token`; false if
    /// none came within 60 s (other datagrams, WATCHDOG=1 say, do not extend that).
    func wait(for token: String) async -> Bool {
        let fd = self.fd
        return await withCheckedContinuation { continuation in
            let thread = Thread {
                var buffer = [UInt8](repeating: 0, count: 4096)
                let deadline = ContinuousClock.now + .seconds(60)
                while ContinuousClock.now < deadline {
                    let n = recv(fd, &buffer, buffer.count, 0)
                    if n <= 0 { return continuation.resume(returning: false) }
                    let text = String(decoding: buffer[..<n], as: UTF8.self)
                    if text.split(separator: "\n").contains(where: { $0 == token }) {
                        return continuation.resume(returning: true)
                    }
                }
                continuation.resume(returning: false)
            }
            thread.start()
        }
    }

    deinit {
        close(fd)
        unlink(path)
    }
}
