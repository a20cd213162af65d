// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation

/// Runs `body`, which blocks (a child process waited for, a pipe read to its end), on a thread of
/// its own. On Swift's cooperative pool it would hold one of its threads, two on two cores: two
/// such tests at once stall every other test in the process, and their bounded waits fail.
public func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { (done: CheckedContinuation<T, any Error>) in
        Thread.detachNewThread { done.resume(with: Result { try body() }) }
    }
}
