// SPDX-License-Identifier: GPL-2.0-or-later
import Glibc

/// Reads and writes on a descriptor a caller passed, for GRDB's queues (never the cooperative
/// pool). Every wait is a poll on the descriptor and on a pipe that the calling task's
/// cancellation (its caller left the bus) makes readable, so a sender that never closes its pipe cannot
/// hold a thread for ever; a non-blocking descriptor works too.
struct DescriptorIO: Sendable {
    let fd: Int32
    private let cancel: Int32
    /// How long a write waits for the reader to take something before it fails; nil: as long as
    /// the caller stays.
    let stallLimit: Duration?

    /// Runs `body` with `fd`; cancelling the current task makes its reads and writes fail.
    static func with<R: Sendable>(
        _ fd: Int32, stallLimit: Duration? = nil, _ body: (DescriptorIO) async throws(HistoryError) -> R
    ) async throws(HistoryError) -> R {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw .failed("No pipe: \(String(cString: strerror(errno))).") }
        defer { close(ends[0]); close(ends[1]) }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        let io = DescriptorIO(fd: fd, cancel: ends[0], stallLimit: stallLimit)
        let signal = ends[1]
        let result: Result<R, HistoryError> = await withTaskCancellationHandler {
            do throws(HistoryError) { return .success(try await body(io)) } catch { return .failure(error) }
        } onCancel: {
            // Never read, so it stays readable: every later wait sees it.
            var byte: UInt8 = 1
            _ = Glibc.write(signal, &byte, 1)
        }
        return try result.get()
    }

    /// Reads up to `buffer.count` bytes; 0 at end of file.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(HistoryError) -> Int {
        while true {
            try wait(for: Int16(POLLIN))
            let n = Glibc.read(fd, buffer.baseAddress, buffer.count)
            if n >= 0 { return n }
            guard errno == EINTR || errno == EAGAIN else {
                throw .badDescriptor("Cannot read the file: \(String(cString: strerror(errno))).")
            }
        }
    }

    /// Writes all of `bytes`, at most PIPE_BUF at a time: a pipe that polls writable takes that
    /// much without blocking, while a larger write to a blocking descriptor would wait for the
    /// reader whole (past the stall limit and the caller's leaving).
    func write(_ bytes: [UInt8]) throws(HistoryError) {
        var done = 0
        while done < bytes.count {
            try wait(for: Int16(POLLOUT))
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + done, min($0.count - done, Int(PIPE_BUF))) }
            if n >= 0 {
                done += n
            } else if errno != EINTR && errno != EAGAIN {
                throw .badDescriptor("Cannot write the file: \(String(cString: strerror(errno))).")
            }
        }
    }

    /// Until `fd` is ready for `events` (or hung up: the read or write then says why).
    private func wait(for events: Int16) throws(HistoryError) {
        var entries = [pollfd(fd: fd, events: events, revents: 0), pollfd(fd: cancel, events: Int16(POLLIN), revents: 0)]
        let limit = events == Int16(POLLOUT) ? stallLimit : nil
        let timeout = limit.map { Int32(clamping: $0.components.seconds * 1000 + $0.components.attoseconds / 1_000_000_000_000_000) } ?? -1
        while true {
            let ready = poll(&entries, 2, timeout)
            if ready > 0 { break }
            if ready == 0, let limit {
                throw .stalled("The reader took nothing for \(limit): the export was stopped.")
            }
            guard errno == EINTR else { throw .failed("Cannot wait on the file: \(String(cString: strerror(errno))).") }
        }
        if entries[1].revents != 0 { throw .badDescriptor("The caller left.") }
        if entries[0].revents & Int16(POLLNVAL) != 0 { throw .badDescriptor("Not an open file.") }
    }
}
