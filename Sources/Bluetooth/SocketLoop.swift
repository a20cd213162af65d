// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation
import Synchronization

/// The sockets BlueZ hands out with AcquireNotify/AcquireWrite (SOCK_SEQPACKET: one packet per
/// notification or write), served by one thread per link that polls them all: reads become
/// notifications, queued writes go out when the socket has room. Nothing blocks the pool.
final class SocketLoop: Sendable {
    struct Channel: Sendable {
        var notifyFD: Int32?
        var writeFD: Int32?
        var incoming: AsyncStream<[UInt8]>.Continuation?
    }

    struct Closed: Error {}

    private struct Job: Sendable {
        var channel: Int
        var packets: [[UInt8]]
        var done: CheckedContinuation<Void, any Error>
    }

    private struct Commands {
        var jobs: [Job] = []
        var closing = false
        var finished = false
    }

    private let commands = Mutex(Commands())
    /// A pipe that wakes the poll: read end first.
    private let wakeFDs: (read: Int32, write: Int32)
    private var wakeFD: Int32 { wakeFDs.read }

    init(channels: [Channel], name: String) {
        var pair: [Int32] = [-1, -1]
        precondition(pipe(&pair) == 0, "pipe failed")
        for fd in pair {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        wakeFDs = (pair[0], pair[1])
        for channel in channels {
            for fd in [channel.notifyFD, channel.writeFD].compactMap({ $0 }) {
                _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            }
        }
        let thread = Thread { [self] in run(channels) }
        thread.name = name
        thread.start()
    }

    /// Sends `packets` on `channel` in order; returns once all are written.
    func write(channel: Int, packets: [[UInt8]]) async throws {
        try await withCheckedThrowingContinuation { (done: CheckedContinuation<Void, any Error>) in
            let accepted = commands.withLock { c -> Bool in
                guard !c.finished else { return false }
                c.jobs.append(Job(channel: channel, packets: packets, done: done))
                return true
            }
            if accepted { wake() } else { done.resume(throwing: Closed()) }
        }
    }

    /// Closes the sockets (releasing the acquisitions) and ends the incoming streams.
    func close() {
        commands.withLock { $0.closing = true }
        wake()
    }

    private func wake() {
        var one: UInt8 = 1
        _ = Glibc.write(wakeFDs.write, &one, 1)
    }

    private func run(_ channels: [Channel]) {
        var queue: [Job] = []
        var sent = 0  // packets of queue[0] already written
        var open = channels
        var buffer = [UInt8](repeating: 0, count: 1024)
        loop: while true {
            let (newJobs, closing) = commands.withLock { c in
                defer { c.jobs.removeAll() }
                return (c.jobs, c.closing)
            }
            queue += newJobs
            if closing { break }
            var fds = [pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0)]
            var owners: [(channel: Int, notify: Bool)] = [(-1, false)]
            for (i, channel) in open.enumerated() {
                if let fd = channel.notifyFD {
                    fds.append(pollfd(fd: fd, events: Int16(POLLIN), revents: 0))
                    owners.append((i, true))
                }
                if let fd = channel.writeFD, queue.first?.channel == i {
                    fds.append(pollfd(fd: fd, events: Int16(POLLOUT), revents: 0))
                    owners.append((i, false))
                }
            }
            guard fds.withUnsafeMutableBufferPointer({ poll($0.baseAddress, nfds_t($0.count), -1) }) >= 0 || errno == EINTR else {
                break
            }
            if fds[0].revents != 0 {
                var drain = [UInt8](repeating: 0, count: 64)
                while read(wakeFD, &drain, drain.count) > 0 {}
            }
            for (index, fd) in fds.enumerated().dropFirst() where fd.revents != 0 {
                let owner = owners[index]
                if owner.notify {
                    let n = read(fd.fd, &buffer, buffer.count)
                    if n > 0 {
                        open[owner.channel].incoming?.yield(Array(buffer[..<n]))
                    } else if n == 0 || (errno != EAGAIN && errno != EINTR) {
                        // The link went away: this channel's notifications end.
                        open[owner.channel].incoming?.finish()
                        Glibc.close(fd.fd)
                        open[owner.channel].notifyFD = nil
                    }
                    continue
                }
                guard var job = queue.first else { continue }
                while sent < job.packets.count {
                    let packet = job.packets[sent]
                    // MSG_NOSIGNAL: a link that dropped gives EPIPE, not SIGPIPE.
                    let n = packet.withUnsafeBytes { send(fd.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                    if n == packet.count {
                        sent += 1
                    } else if n < 0 && (errno == EAGAIN || errno == EINTR) {
                        break
                    } else {
                        queue.removeFirst()
                        sent = 0
                        job.done.resume(throwing: POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO))
                        job.packets = []
                        break
                    }
                }
                if !job.packets.isEmpty && sent == job.packets.count {
                    queue.removeFirst()
                    sent = 0
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
        for job in queue + late { job.done.resume(throwing: Closed()) }
        for channel in open {
            channel.incoming?.finish()
            for fd in [channel.notifyFD, channel.writeFD].compactMap({ $0 }) { Glibc.close(fd) }
        }
        Glibc.close(wakeFDs.read)
        Glibc.close(wakeFDs.write)
    }
}
