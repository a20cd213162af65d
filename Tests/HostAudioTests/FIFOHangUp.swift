// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation
import Glibc

/// Whether the FIFO's writers came and went (all their ends closed) within `limit`.
func hangUp(_ fd: Int32, waitingAtMost limit: Duration) async -> Bool {
    await readFIFO(fd, waitingAtMost: limit) != nil
}

/// The bytes written to the FIFO (its read end `fd`, opened non-blocking) until its writers came
/// and went, or nil if that did not happen within `limit`. Polled on a thread of its own; before
/// any writer came, poll reports nothing.
func readFIFO(_ fd: Int32, waitingAtMost limit: Duration) async -> [UInt8]? {
    await withCheckedContinuation { continuation in
        Thread.detachNewThread {
            let end = ContinuousClock.now + limit
            var bytes: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while ContinuousClock.now < end {
                var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                let left = Int32(clamping: (end - ContinuousClock.now).components.seconds * 1000 + 1)
                guard poll(&p, 1, left) > 0 else { continue }
                let n = read(fd, &buffer, buffer.count)
                if n > 0 {
                    bytes += buffer[0..<n]
                } else if p.revents & Int16(POLLHUP) != 0 {
                    continuation.resume(returning: bytes)
                    return
                }
            }
            continuation.resume(returning: nil)
        }
    }
}
