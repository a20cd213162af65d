// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation

/// Runs `body`, which blocks (a child process waited for, a pipe read to its end), on a thread of
/// its own. On Swift's cooperative pool it would hold one of its threads, two on two cores: two
/// such tests at once stall every other test in the process, and their bounded waits fail. At
/// most as many run at once as the machine has cores: each is a busy child (MicroPython,
/// espeak-ng), and a suite that starts dozens together starves every other test of the CPU.
public func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    await ChildSlots.shared.take()
    let result = await waitingOffPool { Result { try body() } }
    await ChildSlots.shared.give()
    return try result.get()
}

/// Runs `body`, which waits without working (poll on a descriptor, a pipe's end), on a thread of
/// its own and without a slot: a wait on the pool holds one of its two threads, and a wait for a
/// task that needs the other one then lasts as long as the busiest test beside it.
public func waitingOffPool<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { done in
        Thread.detachNewThread { done.resume(returning: body()) }
    }
}

/// Whether `fd` has something to read (or its end) within `milliseconds`, waited for off the pool.
public func readable(_ fd: Int32, within milliseconds: Int32) async -> Bool {
    await waitingOffPool {
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        while true {
            let n = poll(&entry, 1, milliseconds)
            if n >= 0 || errno != EINTR { return n > 0 }
        }
    }
}

/// Places for busy children, taken in turn.
private actor ChildSlots {
    static let shared = ChildSlots(max(1, ProcessInfo.processInfo.activeProcessorCount))

    private var free: Int
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(_ count: Int) { free = count }

    func take() async {
        if free > 0 {
            free -= 1
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    func give() {
        if waiting.isEmpty {
            free += 1
        } else {
            waiting.removeFirst().resume()
        }
    }
}
