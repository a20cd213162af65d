// SPDX-License-Identifier: GPL-2.0-or-later
import Concurrency
import Foundation
import LinkKit
import Synchronization

/// The sockets BlueZ hands out with AcquireNotify/AcquireWrite (SOCK_SEQPACKET: one packet per
/// notification or write), served by one thread per link that polls them all: reads become
/// notifications, queued writes go out when the socket has room. Each channel has its own write
/// queue, so a long upload on one never holds up a message on another. Nothing blocks the pool.
///
/// The thread holds only the loop's `SocketLoopCore`, never the loop: releasing the loop closes
/// it, so a link dropped without `close()` leaves no thread behind.
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
    /// Fired when the thread has released every socket and is about to end.
    var exited: OneShotEvent { core.exited }

    /// Throws ResourceError when no wake-up pipe can be made (`makePipe` stands in for pipe(2),
    /// so a test can fail it); the sockets stay the caller's then.
    init(
        channels: [Channel], name: String, makePipe: (UnsafeMutablePointer<Int32>) -> Int32 = { Glibc.pipe($0) }
    ) throws(ResourceError) {
        core = try SocketLoopCore(makePipe: makePipe)
        for channel in channels {
            for fd in [channel.notifyFD, channel.writeFD].compactMap({ $0 }) {
                _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            }
        }
        let thread = Thread { [core] in core.run(channels) }
        thread.name = name
        thread.start()
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

/// What the thread holds: the queues it is handed, the wake-up pipe, the events it fires.
private final class SocketLoopCore: Sendable {
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

    let commands = Mutex(Commands())
    /// A pipe that wakes the poll: read end first.
    let wakeFDs: (read: Int32, write: Int32)
    let lost = OneShotEvent()
    let exited = OneShotEvent()

    init(makePipe: (UnsafeMutablePointer<Int32>) -> Int32) throws(ResourceError) {
        var pair: [Int32] = [-1, -1]
        guard pair.withUnsafeMutableBufferPointer({ makePipe($0.baseAddress!) }) == 0 else {
            throw ResourceError(call: "pipe", purpose: "the BLE socket thread's wake-up", errno: errno)
        }
        for fd in pair {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        wakeFDs = (pair[0], pair[1])
    }

    func write(channel: Int, packets: [[UInt8]]) async throws {
        let id = commands.withLock { c in
            defer { c.nextID += 1 }
            return c.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (done: CheckedContinuation<Void, any Error>) in
                let refusal = commands.withLock { c -> (any Error)? in
                    guard !c.finished else { return ChannelError.closed }
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

    func close() {
        commands.withLock { $0.closing = true }
        wake()
    }

    /// Under the lock, so the thread cannot have closed the pipe meanwhile (nor a new
    /// descriptor taken its number).
    private func wake() {
        commands.withLock { c in
            guard !c.finished else { return }
            var one: UInt8 = 1
            _ = Glibc.write(wakeFDs.write, &one, 1)
        }
    }

    func run(_ channels: [SocketLoop.Channel]) {
        var queues: [[Job]] = Array(repeating: [], count: channels.count)
        var sent = Array(repeating: 0, count: channels.count)  // packets of queues[i][0] already written
        var open = channels
        var buffer = [UInt8](repeating: 0, count: 1024)
        while true {
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
            if closing { break }
            var fds = [pollfd(fd: wakeFDs.read, events: Int16(POLLIN), revents: 0)]
            var owners: [(channel: Int, notify: Bool)] = [(-1, false)]
            for (i, channel) in open.enumerated() {
                if let fd = channel.notifyFD {
                    fds.append(pollfd(fd: fd, events: Int16(POLLIN), revents: 0))
                    owners.append((i, true))
                }
                if let fd = channel.writeFD, !queues[i].isEmpty {
                    fds.append(pollfd(fd: fd, events: Int16(POLLOUT), revents: 0))
                    owners.append((i, false))
                }
            }
            guard fds.withUnsafeMutableBufferPointer({ poll($0.baseAddress, nfds_t($0.count), -1) }) >= 0 || errno == EINTR else {
                break
            }
            if fds[0].revents != 0 {
                var drain = [UInt8](repeating: 0, count: 64)
                while read(wakeFDs.read, &drain, drain.count) > 0 {}
            }
            for (index, fd) in fds.enumerated().dropFirst() where fd.revents != 0 {
                let i = owners[index].channel
                if owners[index].notify {
                    let n = read(fd.fd, &buffer, buffer.count)
                    if n > 0 {
                        open[i].inbox?.push(Array(buffer[..<n]))
                    } else if n == 0 || (errno != EAGAIN && errno != EINTR) {
                        // EOF or error: BlueZ let go of the socket, so the link is gone.
                        open[i].inbox?.finish()
                        Glibc.close(fd.fd)
                        open[i].notifyFD = nil
                        lost.fire()
                    }
                    continue
                }
                guard let job = queues[i].first else { continue }
                var failure: Int32?
                while sent[i] < job.packets.count {
                    let packet = job.packets[sent[i]]
                    // MSG_NOSIGNAL: a link that dropped gives EPIPE, not SIGPIPE.
                    let n = packet.withUnsafeBytes { send(fd.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                    if n == packet.count {
                        sent[i] += 1
                    } else if n < 0 && (errno == EAGAIN || errno == EINTR) {
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
            }
        }
        // Closing: refuse new writes, fail queued ones, release every socket.
        let late = commands.withLock { c in
            c.finished = true
            defer { c.jobs.removeAll() }
            return c.jobs
        }
        for job in queues.joined() + late { job.done.resume(throwing: ChannelError.closed) }
        for channel in open {
            channel.inbox?.finish()
            for fd in [channel.notifyFD, channel.writeFD].compactMap({ $0 }) { Glibc.close(fd) }
        }
        Glibc.close(wakeFDs.read)
        Glibc.close(wakeFDs.write)
        exited.fire()
    }
}
