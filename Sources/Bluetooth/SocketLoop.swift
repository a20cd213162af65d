// SPDX-License-Identifier: GPL-2.0-or-later
import Concurrency
import EventLoop
import Foundation
import LinkKit
import Synchronization

/// The sockets BlueZ hands out with AcquireNotify/AcquireWrite (SOCK_SEQPACKET: one packet per
/// notification or write), served on the process's event loop: reads become notifications,
/// queued writes go out when the socket has room. Each channel has its own write queue, so a
/// long upload on one never holds up a message on another. Nothing blocks the pool.
///
/// The loop holds only the link's `SocketLoopCore`, never this object: releasing it closes the
/// sockets, so a link dropped without `close()` leaves nothing behind.
final class SocketLoop: Sendable {
    struct Channel: Sendable {
        var notifyFD: Int32?
        var writeFD: Int32?
        var inbox: PacketInbox?
    }

    private let core: SocketLoopCore
    /// Fired when a notify socket reports EOF or an error, or a write fails: the link is gone
    /// (BlueZ closes the sockets when the device disconnects).
    var lost: OneShotEvent { core.lost }
    /// Fired when the loop has released every socket.
    var exited: OneShotEvent { core.exited }

    /// Throws ResourceError when the event loop cannot be had (`loop` stands in for
    /// `EventLoop.shared`, so a test can fail it); the sockets stay the caller's then. `name`
    /// says what the sockets are for, in errors.
    init(
        channels: [Channel], name: String, loop: () throws(ResourceError) -> EventLoop = EventLoop.shared
    ) throws(ResourceError) {
        let loop = try loop()
        for channel in channels {
            for fd in [channel.notifyFD, channel.writeFD].compactMap({ $0 }) {
                _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            }
        }
        let core = SocketLoopCore(loop: loop, name: name)
        self.core = core
        loop.post { core.assumeIsolated { $0.start(channels) } }
    }

    deinit { core.close() }

    /// Sends `packets` on `channel` in order; returns once all are written. Cancellation drops the
    /// packets not yet written and throws CancellationError.
    func write(channel: Int, packets: [[UInt8]]) async throws {
        try await core.write(channel: channel, packets: packets)
    }

    /// Closes the sockets (releasing the acquisitions) and ends the inboxes.
    func close() { core.close() }
}

/// The link's sockets on the loop: what other threads hand it (`commands`), and the queues and
/// sources only the loop thread touches.
private actor SocketLoopCore {
    struct Job: Sendable {
        var id: UInt64
        var channel: Int
        var packets: [[UInt8]]
        var done: CheckedContinuation<Void, any Error>
    }

    struct Commands {
        var jobs: [Job] = []
        var cancelled: Set<UInt64> = []
        var nextID: UInt64 = 0
        var closing = false
        var finished = false
    }

    /// Packets one channel writes in a row before others get the loop: a long upload to a fast
    /// socket must not hold up the bus or the other channels.
    static let packetsPerTurn = 64

    nonisolated let loop: EventLoop
    nonisolated let name: String
    nonisolated let commands = Mutex(Commands())
    nonisolated let lost = OneShotEvent()
    nonisolated let exited = OneShotEvent()
    nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }

    private var open: [SocketLoop.Channel] = []
    private var queues: [[Job]] = []
    /// Packets of queues[i][0] already written.
    private var sent: [Int] = []
    private var readers: [LoopIO?] = []
    private var writers: [LoopIO?] = []
    private var buffer = [UInt8](repeating: 0, count: 1024)
    private var done = false

    init(loop: EventLoop, name: String) {
        self.loop = loop
        self.name = name
    }

    nonisolated func write(channel: Int, packets: [[UInt8]]) async throws {
        let id = commands.withLock { c in
            defer { c.nextID += 1 }
            return c.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (done: CheckedContinuation<Void, any Error>) in
                let refusal = commands.withLock { c -> (any Error)? in
                    guard !c.finished && !c.closing else { return ChannelError.closed }
                    // A task cancelled before this point ran onCancel already, and the loop
                    // may have consumed (and forgotten) that id before the job existed: such a
                    // job would never be cancelled. The flag is set before onCancel runs, so a
                    // cancel either shows here or inserts its id after the job is queued.
                    guard !Task.isCancelled else { return CancellationError() }
                    c.jobs.append(Job(id: id, channel: channel, packets: packets, done: done))
                    return nil
                }
                if let refusal { done.resume(throwing: refusal) } else { wake() }
            }
        } onCancel: {
            commands.withLock { _ = $0.cancelled.insert(id) }
            wake()
        }
    }

    nonisolated func close() {
        commands.withLock { $0.closing = true }
        wake()
    }

    /// Has the loop look at `commands`.
    private nonisolated func wake() {
        loop.post { [self] in assumeIsolated { $0.turn() } }
    }

    /// Watches the sockets; the first thing the loop does for the link.
    func start(_ channels: [SocketLoop.Channel]) {
        open = channels
        queues = Array(repeating: [], count: channels.count)
        sent = Array(repeating: 0, count: channels.count)
        readers = Array(repeating: nil, count: channels.count)
        writers = Array(repeating: nil, count: channels.count)
        // The sources hold this core until `finish()` removes them (`close()`, which the
        // SocketLoop's deinit calls, comes to it).
        do {
            for (i, channel) in channels.enumerated() {
                if let fd = channel.notifyFD {
                    readers[i] = try LoopIO(loop, fd: fd, events: .readable, purpose: "\(name) notifications") { [self] _ in
                        readReady(i)
                    }
                }
                if let fd = channel.writeFD {
                    writers[i] = try LoopIO(loop, fd: fd, events: [], purpose: "\(name) writes") { [self] _ in
                        pump(i)
                    }
                }
            }
        } catch {
            // The loop cannot watch them (out of memory): as good as lost.
            lost.fire()
            return finish()
        }
        turn()
    }

    private func turn() {
        guard !done else { return }
        let (newJobs, cancelled, closing) = commands.withLock { c in
            defer {
                c.jobs.removeAll()
                c.cancelled.removeAll()
            }
            return (c.jobs, c.cancelled, c.closing)
        }
        for job in newJobs { queues[job.channel].append(job) }
        if !cancelled.isEmpty {
            for i in queues.indices {
                for (position, job) in queues[i].enumerated() where cancelled.contains(job.id) {
                    job.done.resume(throwing: CancellationError())
                    if position == 0 { sent[i] = 0 }
                }
                queues[i].removeAll { cancelled.contains($0.id) }
            }
        }
        if closing { return finish() }
        for i in queues.indices { pump(i) }
    }

    private func readReady(_ i: Int) {
        guard let fd = open[i].notifyFD else { return }
        for _ in 0..<Self.packetsPerTurn {
            let n = read(fd, &buffer, buffer.count)
            if n > 0 {
                open[i].inbox?.push(Array(buffer[..<n]))
                continue
            }
            if n < 0 && (errno == EAGAIN || errno == EINTR) { return }
            // EOF or error: BlueZ let go of the socket, so the link is gone.
            open[i].inbox?.finish()
            readers[i]?.remove()
            readers[i] = nil
            Glibc.close(fd)
            open[i].notifyFD = nil
            lost.fire()
            return
        }
    }

    /// Writes what channel `i` has queued until the socket is full (then waits for room) or the
    /// turn's packets are out (then comes back in the loop's next round).
    private func pump(_ i: Int) {
        guard !done, let fd = open[i].writeFD else { return }
        var budget = Self.packetsPerTurn
        while let job = queues[i].first, budget > 0 {
            var failure: Int32?
            var full = false
            while sent[i] < job.packets.count && budget > 0 {
                let packet = job.packets[sent[i]]
                // MSG_NOSIGNAL: a link that dropped gives EPIPE, not SIGPIPE.
                let n = packet.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if n == packet.count {
                    sent[i] += 1
                    budget -= 1
                } else if n < 0 && (errno == EAGAIN || errno == EINTR) {
                    full = true
                    break
                } else {
                    failure = n < 0 ? errno : EIO
                    break
                }
            }
            if let failure {
                queues[i].removeFirst()
                sent[i] = 0
                job.done.resume(throwing: POSIXError(POSIXErrorCode(rawValue: failure) ?? .EIO))
                lost.fire()
            } else if sent[i] == job.packets.count {
                queues[i].removeFirst()
                sent[i] = 0
                job.done.resume()
            }
            if full { break }
        }
        // Level-triggered: a socket with room and a queue left runs this again next round.
        writers[i]?.events = queues[i].isEmpty ? [] : .writable
    }

    /// Closing: refuse new writes, fail queued ones, release every socket.
    private func finish() {
        done = true
        let late = commands.withLock { c in
            c.finished = true
            defer { c.jobs.removeAll() }
            return c.jobs
        }
        for job in queues.joined() + late { job.done.resume(throwing: ChannelError.closed) }
        queues.removeAll()
        for source in readers + writers { source?.remove() }
        readers.removeAll()
        writers.removeAll()
        for channel in open {
            channel.inbox?.finish()
            for fd in [channel.notifyFD, channel.writeFD].compactMap({ $0 }) { Glibc.close(fd) }
        }
        open.removeAll()
        exited.fire()
    }
}
