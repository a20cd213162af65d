// SPDX-License-Identifier: GPL-2.0-or-later
import Concurrency
import EventLoop
import Foundation
import Synchronization

/// What owns a connection's socket, and what other threads hand it. A thread of its own
/// resolves, connects (in TLS for wss) and shakes hands, polling the socket and a wake-up pipe:
/// getaddrinfo blocks, and must block neither Swift's cooperative pool nor the event loop. The
/// open connection is then served on the process's event loop (`ConnectionLoop`): reads become
/// messages, queued frames go out as the socket takes them; the thread and its pipe are gone.
///
/// The thread, then the loop, hold this object, not the `WebSocketConnection`, so dropping the
/// connection can still tell them to close (`abandon()`).
final class SocketThread: Sendable {
    typealias Completion = CheckedContinuation<Result<Void, WebSocketError>, Never>

    enum Command: Sendable {
        case send(id: UInt64, bytes: [UInt8], done: Completion)
        case cancelSend(id: UInt64)
        case close(code: UInt16, reason: String)
    }

    private struct State: Sendable {
        /// In the order they were made, so a close goes out after the sends before it.
        var commands: [Command] = []
        /// Close at once and quietly: the owner is gone, or it gave up connecting.
        var abandoned = false
        var closeWaiters: [CheckedContinuation<Void, Never>] = []
        var nextID: UInt64 = 0
        /// The peer's close frame, once it came.
        var peerClose: PeerClose?
        /// Set when the connection is done: what sends fail with.
        var ended: WebSocketError?
        /// While connecting: the wake-up pipe is open.
        var pipeOpen = true
        /// Once served on the loop: how to have it look at the commands.
        var server: (@Sendable () -> Void)?
    }

    struct PeerClose: Sendable, Equatable {
        var code: UInt16?
        var reason: String
    }

    private let state = Mutex(State())
    /// The wake-up pipe while connecting: a byte in it makes the thread look at `state`. Read end first.
    let wakeFDs: (read: Int32, write: Int32)
    let loop: EventLoop

    /// Throws when no pipe or no event loop can be had (out of file descriptors): the connection
    /// fails, the process does not. `loop` stands in for `EventLoop.shared`.
    init(loop: () throws(ResourceError) -> EventLoop = EventLoop.shared) throws(WebSocketError) {
        do {
            self.loop = try loop()
        } catch {
            throw .connectFailed("no event loop: \(error)")
        }
        var pair: [Int32] = [-1, -1]
        // Glibc's Swift module has no eventfd; a non-blocking pipe wakes poll just as well.
        guard pipe(&pair) == 0 else {
            throw .connectFailed("cannot make a wake-up pipe: \(String(cString: strerror(errno)))")
        }
        for fd in pair {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        wakeFDs = (pair[0], pair[1])
    }

    /// Starts the thread. `connected` is resumed once the handshake succeeded or failed; then the
    /// thread serves the connection, yielding messages to `messages`, until it ends.
    func start(
        handshake: ClientHandshake, caFile: String?, deadline: ContinuousClock.Instant, maximumMessageSize: Int,
        backlog: InboundBacklog, connected: Completion, messages: AsyncThrowingStream<WebSocketMessage, any Error>.Continuation
    ) {
        let thread = Thread { [self] in
            switch establish(handshake, caFile: caFile, deadline: deadline) {
            case .failure(let error):
                messages.finish(throwing: error)
                end(with: error, pending: [])
                connected.resume(returning: .failure(error))
            case .success(let (channel, leftover)):
                let connection = ConnectionLoop(
                    loop: loop, channel: channel, owner: self, messages: messages, maximumMessageSize: maximumMessageSize,
                    backlog: backlog)
                serve(ConnectionSession(loop: loop, connection: connection), leftover: leftover)
                connected.resume(returning: .success(()))
            }
        }
        thread.name = "websocket \(handshake.url.host):\(handshake.url.port)"
        thread.start()
    }

    /// Connected: the loop serves the connection from now on, and the connecting thread's pipe goes.
    private func serve(_ session: ConnectionSession, leftover: [UInt8]) {
        let loop = loop
        state.withLock { s in
            // Until the connection ends (`end`): the loop holds this object and the session.
            s.server = { loop.post { session.assumeIsolated { $0.turn() } } }
            s.pipeOpen = false
            Glibc.close(wakeFDs.read)
            Glibc.close(wakeFDs.write)
        }
        loop.post { session.assumeIsolated { $0.start(leftover) } }
    }

    func nextSendID() -> UInt64 {
        state.withLock { s in
            defer { s.nextID += 1 }
            return s.nextID
        }
    }

    /// Queues a command for the thread. A send after the end fails at once.
    func submit(_ command: Command) {
        let refused: (Completion, WebSocketError)? = state.withLock { s in
            if let ended = s.ended {
                if case .send(_, _, let done) = command { return (done, ended) }
                return nil
            }
            s.commands.append(command)
            wake(s)
            return nil
        }
        if let (done, error) = refused { done.resume(returning: .failure(error)) }
    }

    /// Asks for a close and waits until the thread has closed the socket.
    func close(code: UInt16, reason: String) async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let done = state.withLock { s in
                guard s.ended == nil else { return true }
                s.closeWaiters.append(waiter)
                s.commands.append(.close(code: code, reason: reason))
                wake(s)
                return false
            }
            if done { waiter.resume() }
        }
    }

    /// The owner is gone (or stopped waiting for the connection): close without waiting for anyone.
    func abandon() {
        state.withLock { s in
            s.abandoned = true
            wake(s)
        }
    }

    var peerClose: PeerClose? { state.withLock { $0.peerClose } }

    /// While connecting nobody can send or close yet, so only this can stop the thread.
    var isAbandoned: Bool { state.withLock { $0.abandoned } }

    // MARK: For the thread

    func takeCommands() -> (commands: [Command], abandoned: Bool) {
        state.withLock { s in
            defer { s.commands.removeAll() }
            return (s.commands, s.abandoned)
        }
    }

    func recordPeerClose(_ close: PeerClose) {
        state.withLock { $0.peerClose = close }
    }

    /// Empties the wake-up pipe after poll saw it readable (while connecting).
    func drainWakeups() {
        var scratch = [UInt8](repeating: 0, count: 64)
        while read(wakeFDs.read, &scratch, scratch.count) > 0 {}
    }

    /// The connection's last act: later sends fail with `error`; the sends still queued (`pending`
    /// and those not yet taken) fail now, the close waiters go on, and the pipe is closed (if the
    /// connection never got to the loop), or the loop lets go of the session.
    func end(with error: WebSocketError, pending: [Completion]) {
        let (late, waiters, server) = state.withLock { s in
            s.ended = error
            // Let go of outside the lock: it may hold the last reference to the session.
            let server = s.server.take()
            // Under the lock, so no `wake` can write to a closed (or reused) descriptor.
            if s.pipeOpen {
                s.pipeOpen = false
                Glibc.close(wakeFDs.read)
                Glibc.close(wakeFDs.write)
            }
            defer {
                s.commands.removeAll()
                s.closeWaiters.removeAll()
            }
            let late = s.commands.compactMap { command -> Completion? in
                if case .send(_, _, let done) = command { return done }
                return nil
            }
            return (late, s.closeWaiters, server)
        }
        for done in pending + late { done.resume(returning: .failure(error)) }
        for waiter in waiters { waiter.resume() }
        withExtendedLifetime(server) {}
    }

    private func wake(_ s: borrowing State) {
        guard s.ended == nil else { return }
        if let server = s.server { return server() }
        guard s.pipeOpen else { return }
        var one: UInt8 = 1
        _ = write(wakeFDs.write, &one, 1)
    }
}
