// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation

/// Runs `body`, which blocks (a child process waited for, a pipe read to its end), on a thread of
/// its own. On Swift's cooperative pool it would hold one of its threads, two on two cores: two
/// such tests at once stall every other test in the process, and their bounded waits fail. At
/// most as many run at once as the machine has cores: each is a busy child (MicroPython,
/// espeak-ng), and a suite that starts dozens together starves every other test of the CPU.
public func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    await ChildSlots.shared.take()
    let result = await withCheckedContinuation { (done: CheckedContinuation<Result<T, any Error>, Never>) in
        Thread.detachNewThread { done.resume(returning: Result { try body() }) }
    }
    await ChildSlots.shared.give()
    return try result.get()
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
