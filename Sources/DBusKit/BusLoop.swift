// SPDX-License-Identifier: GPL-2.0-or-later
import CSystemd
import Foundation
import Synchronization

/// A dedicated thread that owns one sd-bus connection and serves as the serial executor of the
/// actor wrapping it: sd-bus objects may be touched by one thread only, and waiting on the bus fd
/// is a blocking poll that must stay off the cooperative pool.
public final class BusLoop: SerialExecutor {
    /// What the owner of the loop wants polled next; produced on the loop thread.
    struct PollRequest: Sendable {
        var fd: Int32
        var events: Int16
        /// Milliseconds; -1 waits for ever.
        var timeoutMS: Int32
    }

    private let jobs = Mutex<[UnownedJob]>([])
    private let closures = Mutex<[@Sendable () -> Void]>([])
    private let wakeFD: Int32
    private let threadID = Atomic<UInt>(0)

    init() {
        wakeFD = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        precondition(wakeFD >= 0, "eventfd failed")
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        jobs.withLock { $0.append(unowned) }
        wake()
    }

    /// Runs `body` on the loop thread soon; for synchronous callers such as stream terminations.
    func execute(_ body: @escaping @Sendable () -> Void) {
        closures.withLock { $0.append(body) }
        wake()
    }

    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    var isOnLoopThread: Bool {
        let id = threadID.load(ordering: .acquiring)
        return id != 0 && pthread_equal(pthread_self(), pthread_t(id)) != 0
    }

    public func checkIsolated() {
        precondition(isOnLoopThread, "not on the bus thread")
    }

    public func isIsolatingCurrentContext() -> Bool? { isOnLoopThread }

    private func wake() {
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
    }

    /// Starts the thread. `step` runs on it after each batch of jobs: it processes bus I/O and
    /// says what to wait for next (nil: nothing but jobs).
    func start(name: String, step: @escaping @Sendable () -> PollRequest?) {
        let thread = Thread { [self] in
            threadID.store(UInt(pthread_self()), ordering: .releasing)
            run(step: step)
        }
        thread.name = name
        thread.start()
    }

    private func run(step: @Sendable () -> PollRequest?) {
        let executor = asUnownedSerialExecutor()
        while true {
            let batch = jobs.withLock { jobs in
                defer { jobs.removeAll(keepingCapacity: true) }
                return jobs
            }
            for job in batch { job.runSynchronously(on: executor) }
            let work = closures.withLock { work in
                defer { work.removeAll() }
                return work
            }
            for body in work { body() }
            // Anything queued meanwhile has written the eventfd, so the poll below returns at once.
            let request = step()
            var fds = [pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0)]
            if let request { fds.append(pollfd(fd: request.fd, events: request.events, revents: 0)) }
            let timeout = request?.timeoutMS ?? -1
            _ = fds.withUnsafeMutableBufferPointer { poll($0.baseAddress, nfds_t($0.count), timeout) }
            if fds[0].revents != 0 {
                var value: UInt64 = 0
                _ = read(wakeFD, &value, 8)
            }
        }
    }
}
