// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation

/// An open connection as its socket thread serves it: frames in, messages out, queued frames
/// written as the socket takes them, pings answered, the close handshake. Lives on that thread
/// only.
final class ConnectionLoop {
    private enum Phase {
        case open
        /// Our close frame is queued or sent; the peer's is awaited until `deadline`.
        case closeSent(deadline: ContinuousClock.Instant)
        /// The peer closed; our answer goes out, then the socket closes.
        case answeringClose
        case ended
    }

    /// A frame on its way out; `done` goes on once it is all written.
    private struct Outgoing {
        var bytes: [UInt8]
        var written = 0
        var id: UInt64?
        var done: SocketThread.Completion?
        var isClose = false
    }

    /// How long a close waits for the peer's close frame.
    static let closeWait: Duration = .seconds(1)

    private let fd: Int32
    private let owner: SocketThread
    private let messages: AsyncThrowingStream<WebSocketMessage, any Error>.Continuation
    private var decoder: FrameDecoder
    private var assembler: MessageAssembler
    private var queue: [Outgoing] = []
    private var phase = Phase.open
    /// What a send fails with once the connection is closing.
    private var closedError = WebSocketError.closed(code: nil, reason: "")
    private var readBuffer = [UInt8](repeating: 0, count: 64 << 10)

    init(fd: Int32, owner: SocketThread, messages: AsyncThrowingStream<WebSocketMessage, any Error>.Continuation, maximumMessageSize: Int) {
        self.fd = fd
        self.owner = owner
        self.messages = messages
        decoder = FrameDecoder(maximumMessageSize: maximumMessageSize)
        assembler = MessageAssembler(maximumMessageSize: maximumMessageSize)
    }

    func run(_ leftover: [UInt8]) {
        received(leftover)
        while !isEnded {
            let (commands, abandoned) = owner.takeCommands()
            for command in commands { handle(command) }
            // Dropped by its owner: close as if asked to ("going away"), but nobody waits.
            if abandoned { handle(.close(code: 1001, reason: "")) }
            flush()
            if isEnded { break }
            var fds = [
                pollfd(fd: owner.wakeFDs.read, events: Int16(POLLIN), revents: 0),
                pollfd(fd: fd, events: Int16(POLLIN) | (queue.isEmpty ? 0 : Int16(POLLOUT)), revents: 0),
            ]
            var timeout: Int32 = -1
            if case .closeSent(let deadline) = phase {
                let left = deadline - .now
                // The peer never answered our close: give up on it, which is still a clean end.
                guard left > .zero else { return end(nil) }
                timeout = SocketThread.milliseconds(left)
            }
            if poll(&fds, 2, timeout) < 0 && errno != EINTR {
                return end(.closed(code: nil, reason: "poll: \(String(cString: strerror(errno)))"))
            }
            if fds[0].revents != 0 { owner.drainWakeups() }
            if fds[1].revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 { readAvailable() }
        }
    }

    private var isEnded: Bool {
        if case .ended = phase { return true }
        return false
    }

    private func handle(_ command: SocketThread.Command) {
        switch command {
        case .send(let id, let bytes, let done):
            guard case .open = phase else { return done.resume(returning: .failure(closedError)) }
            queue.append(Outgoing(bytes: bytes, id: id, done: done))
        case .cancelSend(let id):
            // Only a frame not yet begun can be taken back; half a frame would break the stream.
            guard let index = queue.firstIndex(where: { $0.id == id && $0.written == 0 }) else { return }
            queue.remove(at: index).done?.resume(returning: .failure(.cancelled))
        case .close(let code, let reason):
            guard case .open = phase else { return }
            let frame = WebSocketFrame(opcode: .close, payload: WebSocketFrame.closePayload(code: code, reason: reason))
            queue.append(Outgoing(bytes: frame.encoded(maskingKey: .random()), isClose: true))
            closedError = .closed(code: code, reason: reason)
            phase = .closeSent(deadline: .now + Self.closeWait)
        }
    }

    private func readAvailable() {
        let n = read(fd, &readBuffer, readBuffer.count)
        if n > 0 {
            received(readBuffer[..<n])
        } else if n == 0 {
            if case .open = phase {
                end(.closed(code: nil, reason: "the server closed the connection without a close frame"))
            } else {
                end(nil)
            }
        } else if errno != EAGAIN && errno != EINTR {
            end(.closed(code: nil, reason: "connection lost: \(String(cString: strerror(errno)))"))
        }
    }

    private func received(_ bytes: some Collection<UInt8>) {
        decoder.feed(bytes)
        do {
            while !isEnded, let frame = try decoder.next() {
                // After the peer's close nothing it sends counts (§5.5.1).
                if case .answeringClose = phase { return }
                guard let event = try assembler.push(frame) else { continue }
                switch event {
                case .message(let message):
                    messages.yield(message)
                case .ping(let payload):
                    guard case .open = phase else { continue }
                    enqueueControl(WebSocketFrame(opcode: .pong, payload: payload))
                case .pong:
                    break  // We send no pings; an unsolicited pong needs no answer (§5.5.3).
                case .close(let code, let reason):
                    owner.recordPeerClose(SocketThread.PeerClose(code: code, reason: reason))
                    guard case .open = phase else { return end(nil) }
                    answerClose(code: code, reason: reason)
                }
            }
        } catch {
            fail(error)
        }
    }

    /// The peer closed first: frames not yet begun are dropped, our close goes out next.
    private func answerClose(code: UInt16?, reason: String) {
        closedError = .closed(code: code, reason: reason)
        let kept = queue.first.map { $0.written > 0 } == true ? 1 : 0
        for item in queue[kept...] { item.done?.resume(returning: .failure(closedError)) }
        queue.removeSubrange(kept...)
        let payload = code.map { WebSocketFrame.closePayload(code: $0, reason: "") } ?? []
        queue.append(Outgoing(bytes: WebSocketFrame(opcode: .close, payload: payload).encoded(maskingKey: .random()), isClose: true))
        phase = .answeringClose
    }

    /// A control frame goes ahead of queued messages, but never into the middle of a frame.
    private func enqueueControl(_ frame: WebSocketFrame) {
        let index = queue.first.map { $0.written > 0 } == true ? 1 : 0
        queue.insert(Outgoing(bytes: frame.encoded(maskingKey: .random())), at: index)
    }

    private func flush() {
        while !isEnded, !queue.isEmpty {
            let n = queue[0].bytes.withUnsafeBytes { bytes in
                send(fd, bytes.baseAddress! + queue[0].written, bytes.count - queue[0].written, Int32(MSG_NOSIGNAL))
            }
            if n < 0 {
                if errno == EAGAIN || errno == EINTR { return }
                return end(.closed(code: nil, reason: "connection lost: \(String(cString: strerror(errno)))"))
            }
            queue[0].written += n
            guard queue[0].written == queue[0].bytes.count else { continue }
            let sent = queue.removeFirst()
            sent.done?.resume(returning: .success(()))
            if sent.isClose, case .answeringClose = phase { return end(nil) }
        }
    }

    /// The peer broke the protocol: tell it why if the socket allows right now, then hang up.
    private func fail(_ error: WebSocketError) {
        if queue.first.map({ $0.written == 0 }) ?? true {
            let frame = WebSocketFrame(opcode: .close, payload: WebSocketFrame.closePayload(code: error.closeCode, reason: ""))
            let bytes = frame.encoded(maskingKey: .random())
            _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
        }
        closedError = .closed(code: error.closeCode, reason: error.message)
        end(error)
    }

    /// Closes the socket and finishes everything: the stream (cleanly when `error` is nil), the
    /// sends still queued, the close waiters, the thread.
    private func end(_ error: WebSocketError?) {
        guard !isEnded else { return }
        phase = .ended
        Glibc.close(fd)
        if let error {
            messages.finish(throwing: error)
            if case .closed = error { closedError = error }
        } else {
            messages.finish()
        }
        owner.end(with: closedError, pending: queue.compactMap(\.done))
        queue.removeAll()
    }
}

@available(*, unavailable)
extension ConnectionLoop: Sendable {}
