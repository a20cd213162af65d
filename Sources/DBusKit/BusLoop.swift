// SPDX-License-Identifier: GPL-2.0-or-later
import CSystemd
import Concurrency
import Foundation
import Synchronization

/// A dedicated thread that owns one sd-bus connection and serves as the serial executor of the
/// actor wrapping it: sd-bus objects may be touched by one thread only, and waiting on the bus fd
/// is a blocking poll that must stay off the cooperative pool.
///
/// Lifetime: `stop()` (from `BusConnection.close()`) makes the thread run what is queued, close
/// its eventfd and exit; `exited` fires then. Work enqueued after that still runs: an executor
/// cannot refuse a job (the task that enqueued it would hang for ever), and a closed connection
/// is still an actor others may call into (to find it closed, to send a reply that is then
/// dropped). Such late work runs on a short-lived thread that starts when work arrives, runs the
/// queue dry and exits; only one runs at a time, so the executor stays serial, and a closed
/// connection holds no thread while nothing is queued.
public final class BusLoop: SerialExecutor {
    /// What the owner of the loop wants polled next; produced on the loop thread.
    struct PollRequest: Sendable {
        var fd: Int32
        var events: Int16
        /// Milliseconds; -1 waits for ever.
        var timeoutMS: Int32
    }

    private enum Phase {
        /// The loop thread runs and polls; the eventfd wakes it.
        case running
        /// The loop thread runs what is queued, then exits.
        case stopping
        /// No thread; the eventfd is closed. New work starts a drain thread.
        case stopped
        /// A drain thread runs queued work and exits when there is none.
        case draining
    }

    /// Jobs and closures run in the order they were queued: a signal posted before a reply is
    /// sent before it.
    private enum Work {
        case job(UnownedJob)
        case closure(@Sendable () -> Void)
    }

    private struct Queue {
        var work: [Work] = []
        var phase = Phase.running
        var isEmpty: Bool { work.isEmpty }
    }

    private let queue = Mutex(Queue())
    private let wakeFD: Int32
    private let threadID = Atomic<UInt>(0)
    private let name = Mutex("sd-bus")
    /// The loop thread, until joined.
    private let loopThread = Mutex<pthread_t?>(nil)
    /// Fires when the loop thread is about to exit (its eventfd closed); `join()` then waits out
    /// the last of it.
    let exited = LoopExit()

    /// `makeWakeFD` stands in for eventfd(2), so a test can fail it.
    init(makeWakeFD: () -> Int32 = { eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK)) }) throws(BusError) {
        let fd = makeWakeFD()
        guard fd >= 0 else { throw BusError.system(errno, "eventfd for the bus thread") }
        wakeFD = fd
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        add { $0.work.append(.job(unowned)) }
    }

    /// Runs `body` on the loop thread soon; for synchronous callers such as stream terminations.
    func execute(_ body: @escaping @Sendable () -> Void) {
        add { $0.work.append(.closure(body)) }
    }

    private func add(_ insert: (inout Queue) -> Void) {
        let startDrain = queue.withLock { queue -> Bool in
            let wasEmpty = queue.isEmpty
            insert(&queue)
            switch queue.phase {
            case .running, .stopping:
                // Work already queued has woken the loop, which takes the whole queue after the
                // wake-up: one eventfd write per batch. Under the lock, so the loop cannot close
                // the eventfd meanwhile.
                if wasEmpty {
                    var one: UInt64 = 1
                    _ = write(wakeFD, &one, 8)
                }
                return false
            case .stopped:
                queue.phase = .draining
                return true
            case .draining:
                return false
            }
        }
        if startDrain {
            do {
                let thread = try spawn(name.withLock { $0 } + "~") { [self] in drain() }
                pthread_detach(thread)
            } catch {
                // No thread to spare, and an executor cannot refuse a job (its task would wait
                // for ever): a thread of Dispatch's pool runs the late work instead.
                DispatchQueue.global().async { [self] in
                    threadID.store(UInt(pthread_self()), ordering: .releasing)
                    drain()
                }
            }
        }
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

    /// Starts the thread. `step` runs on it after each batch of jobs: it processes bus I/O and
    /// says what to wait for next (nil: nothing but jobs). `threads` stands in for pthread_create
    /// (a test fails it). If no thread starts, the loop is stopped: work sent to it runs as late
    /// work does, and `exited` has fired.
    func start(
        name: String, threads: ThreadCreator = .system, step: @escaping @Sendable () -> PollRequest?
    ) throws(BusError) {
        self.name.withLock { $0 = name }
        do {
            let thread = try spawn(name, threads: threads) { [self] in
                run(step: step)
                exited.fire()
            }
            loopThread.withLock { $0 = thread }
        } catch {
            let queued = queue.withLock { queue -> Bool in
                close(wakeFD)
                queue.phase = .stopped
                return !queue.isEmpty
            }
            exited.fire()
            if queued { add { _ in } }  // work sent before this runs as late work does
            throw error
        }
    }

    /// Asks the loop thread to exit once its queue is empty; called on it (by `close()`).
    func stop() {
        queue.withLock { queue in
            if case .running = queue.phase { queue.phase = .stopping }
        }
    }

    /// After `exited` fired: waits for the loop thread to be gone (the few instructions after
    /// `exited`, so this blocks only for an instant) and frees it. Only the first call joins.
    func join() {
        guard let thread = loopThread.withLock({ $0.take() }) else { return }
        pthread_join(thread, nil)
    }

    /// For a loop whose owner went without `close()`: nobody will join the thread, so it frees
    /// itself when it exits. Only if not joined already.
    func detach() {
        guard let thread = loopThread.withLock({ $0.take() }) else { return }
        pthread_detach(thread)
    }

    /// Starts a joinable thread named `name` (at most 15 bytes are kept) that runs `body`.
    private func spawn(
        _ name: String, threads: ThreadCreator = .system, _ body: @escaping @Sendable () -> Void
    ) throws(BusError) -> pthread_t {
        var thread = pthread_t()
        let r = threads.start(&thread) { [self] in
            threadID.store(UInt(pthread_self()), ordering: .releasing)
            // Foundation names the current thread with pthread_setname_np (which Glibc's module hides).
            Thread.current.name = String(decoding: name.utf8.prefix(15), as: UTF8.self)
            body()
        }
        guard r == 0 else {
            throw BusError.system(r, "pthread_create for the bus thread")
        }
        return thread
    }

    /// Runs the jobs and closures queued so far.
    private func runQueued() {
        let work = queue.withLock { queue in
            defer { queue.work.removeAll(keepingCapacity: true) }
            return queue.work
        }
        let executor = asUnownedSerialExecutor()
        for item in work {
            switch item {
            case .job(let job): job.runSynchronously(on: executor)
            case .closure(let body): body()
            }
        }
    }

    private func run(step: @Sendable () -> PollRequest?) {
        while true {
            runQueued()
            enum Next { case poll, runMore, exit }
            let next = queue.withLock { queue -> Next in
                guard case .stopping = queue.phase else { return .poll }
                guard queue.isEmpty else { return .runMore }
                // Drained: later work goes to a drain thread, which needs no eventfd.
                threadID.store(0, ordering: .releasing)
                close(wakeFD)
                queue.phase = .stopped
                return .exit
            }
            switch next {
            case .exit: return
            case .runMore: continue
            case .poll: break
            }
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

    /// Runs late work (after the loop thread exited) until there is none, then ends.
    private func drain() {
        while true {
            let done = queue.withLock { queue -> Bool in
                guard queue.isEmpty else { return false }
                threadID.store(0, ordering: .releasing)
                queue.phase = .stopped
                return true
            }
            if done { return }
            runQueued()
        }
    }
}

/// A one-shot event for the loop thread's exit, awaited by `BusConnection.close()`.
final class LoopExit: Sendable {
    private let state = Mutex<(fired: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    func fire() {
        let waiters = state.withLock { state in
            state.fired = true
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once fired. Not cancellable: the exit only waits for queued jobs.
    func wait() async {
        await withCheckedContinuation { continuation in
            let now = state.withLock { state in
                if state.fired { return true }
                state.waiters.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }
}
