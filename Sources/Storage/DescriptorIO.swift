// SPDX-License-Identifier: GPL-2.0-or-later
import Glibc

/// Blocking reads and writes on a descriptor a caller passed, for GRDB's queues (never the
/// cooperative pool). A non-blocking descriptor is waited on with poll, not retried in a loop.
enum DescriptorIO {
    /// Reads up to `count` bytes into `buffer`; 0 at end of file.
    static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(HistoryError) -> Int {
        while true {
            let n = Glibc.read(fd, buffer.baseAddress, buffer.count)
            if n >= 0 { return n }
            switch errno {
            case EINTR: continue
            case EAGAIN: try wait(fd, for: Int16(POLLIN))
            default: throw .badDescriptor("Cannot read the file: \(String(cString: strerror(errno))).")
            }
        }
    }

    /// Writes all of `bytes`.
    static func write(_ fd: Int32, _ bytes: [UInt8]) throws(HistoryError) {
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + done, $0.count - done) }
            if n >= 0 {
                done += n
                continue
            }
            switch errno {
            case EINTR: continue
            case EAGAIN: try wait(fd, for: Int16(POLLOUT))
            default: throw .badDescriptor("Cannot write the file: \(String(cString: strerror(errno))).")
            }
        }
    }

    private static func wait(_ fd: Int32, for events: Int16) throws(HistoryError) {
        var entry = pollfd(fd: fd, events: events, revents: 0)
        while poll(&entry, 1, -1) < 0 {
            guard errno == EINTR else { throw .badDescriptor("Cannot wait on the file: \(String(cString: strerror(errno))).") }
        }
    }
}
