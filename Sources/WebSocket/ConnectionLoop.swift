// SPDX-License-Identifier: GPL-2.0-or-later
import EventLoop
import Foundation

/// An open connection as the event loop serves it: frames in, messages out, queued frames
/// written as the channel takes them, pings answered, the close handshake. Lives on the loop
/// thread only (inside its `ConnectionSession`).
final class ConnectionLoop {
    private enum Phase {
        case open
        /// Our close frame is queued or sent; the peer's is awaited until `deadline`.
        case closeSent(deadline: ContinuousClock.Instant)
        /// The peer closed; our answer goes out, then the socket closes.
        case answeringClose
        case ended
    }

    /// How long a close waits for the peer's close frame.
    static let closeWait: Duration = .seconds(1)
    /// Reads in a row before commands get a look: a fast server must not starve the senders.
    static let readsPerTurn = 16

    private let loop: EventLoop
    private let channel: any ByteChannel
    private let owner: SocketThread
    /// The channel's descriptor on the loop; waits for writability only while frames are queued.
    private var io: LoopIO?
    /// The peer's close frame is awaited until then.
    private var closeTimer: LoopTimer?
    /// Reads again at once, for bytes TLS holds that the descriptor does not show.
    private var moreTimer: LoopTimer?
    private let messages: AsyncThrowingStream<WebSocketMessage, any Error>.Continuation
    private var decoder: FrameDecoder
    private var assembler: MessageAssembler
    private var backlog: InboundBacklog
    private var queue: OutgoingQueue
    private var phase = Phase.open
    /// What a send fails with once the connection is closing.
    private var closedError = WebSocketError.closed(code: nil, reason: "")
    private var readBuffer = [UInt8](repeating: 0, count: 64 << 10)
    /// The last turn stopped reading before the channel ran dry: TLS may hold bytes poll cannot see.
    private var mayHaveMore = false

    init(
        loop: EventLoop, channel: any ByteChannel, owner: SocketThread, messages: AsyncThrowingStream<WebSocketMessage, any Error>.Continuation,
        maximumMessageSize: Int, backlog: InboundBacklog
    ) {
        self.loop = loop
        self.channel = channel
        self.owner = owner
        self.messages = messages
        decoder = FrameDecoder(maximumMessageSize: maximumMessageSize)
        assembler = MessageAssembler(maximumMessageSize: maximumMessageSize)
        self.backlog = backlog
        queue = OutgoingQueue(triedWritesPin: channel.retriesWritesAsIs)
    }

    /// The first turn on the loop: watch the channel, take the bytes that came with the handshake.
    func start(_ leftover: [UInt8]) {
        do {
            // Unowned: the connection holds its sources, and removes them when it ends.
            io = try LoopIO(loop, fd: channel.fd, events: .readable, purpose: "a WebSocket") { [unowned self] revents in
                ready(revents)
            }
        } catch {
            return end(.closed(code: nil, reason: "\(error)"))
        }
        received(leftover)
        turn()
    }

    /// Commands came, or the owner left.
    func turn() {
        guard !isEnded else { return }
        let (commands, abandoned) = owner.takeCommands()
        for command in commands { handle(command) }
        // Dropped by its owner: close as if asked to ("going away"), but nobody waits.
        if abandoned { handle(.close(code: 1001, reason: "")) }
        settle()
    }

    private func ready(_ revents: IOEvents) {
        guard !isEnded else { return }
        if !revents.isDisjoint(with: [.readable, .hangUp, .error]) { readAvailable() }
        settle()
    }

    /// After anything happened: write what the channel takes, then wait for what comes next.
    private func settle() {
        flush()
        guard !isEnded else { return }
        io?.events = queue.isEmpty ? .readable : [.readable, .writable]
        do {
            if mayHaveMore {
                let timer = moreTimer ?? LoopTimer(loop, purpose: "a WebSocket's next read") { [unowned self] in ready(.readable) }
                moreTimer = timer
                try timer.schedule(after: .zero)
            }
            if case .closeSent(let deadline) = phase, closeTimer == nil {
                // The peer never answered our close: give up on it, which is still a clean end.
                let timer = LoopTimer(loop, purpose: "a WebSocket's close") { [unowned self] in end(nil) }
                closeTimer = timer
                try timer.schedule(after: deadline - .now)
            }
        } catch {
            end(.closed(code: nil, reason: "\(error)"))
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
            queue.append(.init(bytes: bytes, kind: .message, id: id, done: done))
        case .cancelSend(let id):
            queue.takeBack(id: id)?.done?.resume(returning: .failure(.cancelled))
        case .close(let code, let reason):
            guard case .open = phase else { return }
            let frame = WebSocketFrame(opcode: .close, payload: WebSocketFrame.closePayload(code: code, reason: reason))
            queue.append(.init(bytes: frame.encoded(maskingKey: .random()), kind: .close))
            closedError = .closed(code: code, reason: reason)
            phase = .closeSent(deadline: .now + Self.closeWait)
        }
    }

    /// Reads until the channel has nothing more (or for a turn's worth of reads).
    private func readAvailable() {
        mayHaveMore = false
        for _ in 0..<Self.readsPerTurn {
            guard !isEnded else { return }
            switch readBuffer.withUnsafeMutableBytes({ channel.receive($0) }) {
            case .done(let n) where n > 0:
                received(readBuffer[..<n])
            case .done:
                if case .open = phase {
                    end(.closed(code: nil, reason: "the server closed the connection without a close frame"))
                } else {
                    end(nil)
                }
                return
            case .wouldBlock:
                return
            case .failed(let why):
                return end(.closed(code: nil, reason: "connection lost: \(why)"))
            }
        }
        mayHaveMore = true
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
                    try deliver(message)
                case .ping(let payload):
                    guard case .open = phase else { continue }
                    queue.enqueuePong(WebSocketFrame(opcode: .pong, payload: payload).encoded(maskingKey: .random()))
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

    /// Hands a message to the reader, unless the reader is too far behind: then the connection
    /// ends rather than holding a flood (the messages already waiting are still read first).
    private func deliver(_ message: WebSocketMessage) throws(WebSocketError) {
        let size =
            switch message {
            case .text(let text): text.utf8.count
            case .binary(let bytes): bytes.count
            }
        switch messages.yield(message) {
        case .enqueued(let remaining):
            guard backlog.yielded(size: size, queued: backlog.maximumMessages - remaining) else {
                throw .backlogFull(messages: backlog.waiting, bytes: backlog.bytes)
            }
        case .dropped:
            throw .backlogFull(messages: backlog.waiting + 1, bytes: backlog.bytes + size)
        case .terminated:
            break  // Nobody reads any more: the owner's close follows.
        @unknown default:
            break
        }
    }

    /// The peer closed first: frames not yet begun are dropped, our close goes out next.
    private func answerClose(code: UInt16?, reason: String) {
        closedError = .closed(code: code, reason: reason)
        for done in queue.dropUnbegun() { done.resume(returning: .failure(closedError)) }
        let payload = code.map { WebSocketFrame.closePayload(code: $0, reason: "") } ?? []
        queue.append(.init(bytes: WebSocketFrame(opcode: .close, payload: payload).encoded(maskingKey: .random()), kind: .close))
        phase = .answeringClose
    }

    private func flush() {
        while !isEnded, let head = queue.items.first {
            let result = head.bytes.withUnsafeBytes { channel.send(UnsafeRawBufferPointer(rebasing: $0[head.written...])) }
            switch result {
            case .done(let n) where n > 0:
                guard let sent = queue.wrote(n) else { continue }
                sent.done?.resume(returning: .success(()))
                if sent.kind == .close, case .answeringClose = phase { return end(nil) }
            case .done, .wouldBlock:
                _ = queue.wrote(0)
                return
            case .failed(let why):
                return end(.closed(code: nil, reason: "connection lost: \(why)"))
            }
        }
    }

    /// The peer broke the protocol (or our limits): tell it why if the channel allows right now,
    /// then hang up.
    private func fail(_ error: WebSocketError) {
        if !queue.headBegun {
            let frame = WebSocketFrame(opcode: .close, payload: WebSocketFrame.closePayload(code: error.closeCode, reason: ""))
            channel.sendNow(frame.encoded(maskingKey: .random()))
        }
        closedError = .closed(code: error.closeCode, reason: error.message)
        end(error)
    }

    /// Closes the channel and finishes everything: the stream (cleanly when `error` is nil), the
    /// sends still queued, the close waiters, the thread.
    private func end(_ error: WebSocketError?) {
        guard !isEnded else { return }
        phase = .ended
        // Off the loop before the descriptor closes (and its number is reused).
        io?.remove()
        io = nil
        closeTimer = nil
        moreTimer = nil
        channel.close()
        if let error {
            messages.finish(throwing: error)
            if case .closed = error { closedError = error }
        } else {
            messages.finish()
        }
        owner.end(with: closedError, pending: queue.removeAll())
    }
}

@available(*, unavailable)
extension ConnectionLoop: Sendable {}
