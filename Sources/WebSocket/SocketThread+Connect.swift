// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation

/// Connecting, on the socket's thread: resolve, connect to each address in turn (for `wss`,
/// libcurl connects and shakes hands in TLS), send the upgrade request, read the answer, all
/// before `deadline` (plain resolving aside: getaddrinfo cannot be interrupted; the deadline is
/// checked once it returns).
extension SocketThread {
    /// The connected channel and the bytes read after the response head.
    func establish(
        _ handshake: ClientHandshake, caFile: String?, deadline: ContinuousClock.Instant
    ) -> Result<(any ByteChannel, [UInt8]), WebSocketError> {
        if isAbandoned { return .failure(.cancelled) }
        let channel: any ByteChannel
        if handshake.url.isSecure {
            switch CurlChannel.connect(host: handshake.url.host, port: handshake.url.port, caFile: caFile, deadline: deadline, thread: self) {
            case .failure(let error): return .failure(error)
            case .success(let connected): channel = connected
            }
        } else {
            switch connectSocket(host: handshake.url.host, port: handshake.url.port, deadline: deadline) {
            case .failure(let error): return .failure(error)
            case .success(let fd):
                var noDelay: Int32 = 1
                // Small audio messages: send each at once rather than wait to coalesce (Nagle).
                _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, socklen_t(MemoryLayout<Int32>.size))
                channel = PlainChannel(fd: fd)
            }
        }
        let result = shakeHands(channel, handshake, deadline: deadline)
        if case .failure = result { channel.close() }
        return result.map { (channel, $0) }
    }

    private func shakeHands(_ channel: any ByteChannel, _ handshake: ClientHandshake, deadline: ContinuousClock.Instant) -> Result<[UInt8], WebSocketError> {
        let request = handshake.request
        var written = 0
        while written < request.count {
            switch request.withUnsafeBytes({ channel.send(UnsafeRawBufferPointer(rebasing: $0[written...])) }) {
            case .done(let n): written += n
            case .wouldBlock:
                if let error = wait(channel.fd, for: Int16(POLLOUT), until: deadline) { return .failure(error) }
            case .failed(let why):
                return .failure(.connectFailed("sending the handshake: \(why)"))
            }
        }
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            switch chunk.withUnsafeMutableBytes({ channel.receive($0) }) {
            case .done(let n) where n > 0:
                received += chunk[..<n]
                do {
                    if let leftover = try handshake.parseResponse(received) { return .success(leftover) }
                } catch {
                    return .failure(error)
                }
            case .done:
                return .failure(.handshakeFailed("the server closed the connection before answering"))
            case .wouldBlock:
                if let error = wait(channel.fd, for: Int16(POLLIN), until: deadline) { return .failure(error) }
            case .failed(let why):
                return .failure(.handshakeFailed("reading the answer: \(why)"))
            }
        }
    }

    /// Tries each address of `host` in turn; the first that accepts wins.
    private func connectSocket(host: String, port: UInt16, deadline: ContinuousClock.Instant) -> Result<Int32, WebSocketError> {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_protocol = Int32(IPPROTO_TCP)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let list else {
            let why = status == EAI_SYSTEM ? String(cString: strerror(errno)) : String(cString: gai_strerror(status))
            return .failure(.connectFailed("cannot resolve '\(host)': \(why)"))
        }
        defer { freeaddrinfo(list) }
        var lastError = "no address"
        var entry: UnsafeMutablePointer<addrinfo>? = list
        while let info = entry?.pointee {
            entry = info.ai_next
            if isAbandoned { return .failure(.cancelled) }
            guard ContinuousClock.now < deadline else { return .failure(.timedOut) }
            let type = info.ai_socktype | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
            let fd = socket(info.ai_family, type, info.ai_protocol)
            guard fd >= 0 else {
                lastError = String(cString: strerror(errno))
                continue
            }
            var failure: Int32 = 0
            if Glibc.connect(fd, info.ai_addr, info.ai_addrlen) != 0 {
                failure = errno
                if failure == EINPROGRESS {
                    if let error = wait(fd, for: Int16(POLLOUT), until: deadline) {
                        Glibc.close(fd)
                        return .failure(error)
                    }
                    var length = socklen_t(MemoryLayout<Int32>.size)
                    if getsockopt(fd, SOL_SOCKET, SO_ERROR, &failure, &length) != 0 { failure = errno }
                }
            }
            if failure == 0 { return .success(fd) }
            lastError = String(cString: strerror(failure))
            Glibc.close(fd)
        }
        return .failure(.connectFailed("\(host):\(port): \(lastError)"))
    }

    /// Polls `fd` for `events` and the wake-up pipe until the one is ready, the deadline passes or
    /// the connection is abandoned; nil when ready, else the error to give up with.
    private func wait(_ fd: Int32, for events: Int16, until deadline: ContinuousClock.Instant) -> WebSocketError? {
        while true {
            if isAbandoned { return .cancelled }
            let left = deadline - .now
            guard left > .zero else { return .timedOut }
            var fds = [pollfd(fd: fd, events: events, revents: 0), pollfd(fd: wakeFDs.read, events: Int16(POLLIN), revents: 0)]
            let ready = poll(&fds, 2, Self.milliseconds(left))
            if ready < 0 && errno != EINTR { return .connectFailed("poll: \(String(cString: strerror(errno)))") }
            if fds[1].revents != 0 { drainWakeups() }
            // Errors and hang-ups count as ready: the next call on the socket reports them.
            if fds[0].revents != 0 { return nil }
        }
    }

    /// `duration` for poll: whole milliseconds rounded up, so the deadline has passed when it returns.
    static func milliseconds(_ duration: Duration) -> Int32 {
        let (seconds, attoseconds) = duration.components
        let ms = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int32(clamping: max(0, ms))
    }
}
