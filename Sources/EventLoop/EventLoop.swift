// SPDX-License-Identifier: GPL-2.0-or-later
import CSystemd
import Concurrency
import Foundation
import Synchronization

/// The process's one event loop: a thread running sd-event, which waits on the descriptors
/// glassd serves (the Bluetooth sockets, curl's sockets, open WebSockets) and on timers,
/// and runs the jobs of the actors whose executor it is. Idle, it sleeps in epoll_wait with no
/// timeout: nothing wakes it until a descriptor, a due timer or posted work does.
///
/// sd-event objects are single-threaded: only the loop thread touches them (`LoopIO`, `LoopTimer`
/// check it). Other threads hand it work through one queue and an eventfd (`post`, or a job of an
/// actor isolated to it).
public final class EventLoop: SerialExecutor {
    /// Jobs and closures run in the order they were queued.
    private enum Work {
        case job(UnownedJob)
        case closure(@Sendable () -> Void)
    }

    private struct Queue {
        var work: [Work] = []
        /// The thread has left sd-event (a stopped test loop): the eventfd is closed.
        var finished = false
    }

    private let queue = Mutex(Queue())
    private let wakeFD: Int32
    /// The sd_event, as an address: a pointer is not Sendable, and only the loop thread may use
    /// it, which `event` checks.
    private let eventAddress: UInt
    private let threadID = Atomic<UInt>(0)
    /// Fired when the thread of a stopped loop has let go of everything.
    public let exited = OneShotEvent()

    private static let sharedLoop = Mutex<EventLoop?>(nil)

    /// The process-wide loop, started by the first caller. When it cannot start (no descriptor, no
    /// thread), that caller gets the ResourceError and the next one tries again.
    public static func shared() throws(ResourceError) -> EventLoop {
        try sharedLoop.withLock { loop throws(ResourceError) -> EventLoop in
            if let loop { return loop }
            let made = try EventLoop(name: "glassd-loop")
            loop = made
            return made
        }
    }

    /// A loop on a new thread named `name`. `makeWakeFD`, `makeEvent` and `threads` stand in for
    /// eventfd(2), sd_event_new and pthread_create, so a test can fail each.
    init(
        name: String,
        makeWakeFD: () -> Int32 = { eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK)) },
        makeEvent: (UnsafeMutablePointer<OpaquePointer?>) -> Int32 = { sd_event_new($0) },
        threads: ThreadCreator = .system
    ) throws(ResourceError) {
        let fd = makeWakeFD()
        guard fd >= 0 else { throw ResourceError(call: "eventfd", purpose: "the event loop's wake-up", errno: errno) }
        var event: OpaquePointer?
        let r = makeEvent(&event)
        guard r >= 0, let event else {
            close(fd)
            throw ResourceError(call: "sd_event_new", purpose: "the event loop", errno: -r)
        }
        wakeFD = fd
        eventAddress = UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(event)))
        // Handed to the thread before it starts (pthread_create orders the two): it is the only
        // user from then on.
        var wakeSource: OpaquePointer?
        let added = sd_event_add_io(event, &wakeSource, fd, IOEvents.readable.rawValue, wakeHandler, nil)
        guard added >= 0 else {
            sd_event_unref(event)
            close(fd)
            throw ResourceError(call: "sd_event_add_io", purpose: "the event loop's wake-up", errno: -added)
        }
        // The default priority, as every other source's: sd-event serves ready sources of one
        // priority in the order they became ready, while a higher one always goes first, so jobs
        // arriving without pause would starve every descriptor.
        sd_event_source_set_userdata(wakeSource, Unmanaged.passUnretained(self).toOpaque())
        // Owned by the sd_event from here on (floating takes its own reference), freed with it.
        sd_event_source_set_floating(wakeSource, 1)
        sd_event_source_unref(wakeSource)
        var thread = pthread_t()
        let created = threads.start(&thread) { [self] in run(name: name) }
        guard created == 0 else {
            sd_event_unref(event)
            close(fd)
            throw ResourceError(call: "pthread_create", purpose: "the event loop", errno: created)
        }
        pthread_detach(thread)
    }

    /// The sd_event; on the loop thread only.
    var event: OpaquePointer {
        precondition(isOnLoopThread, "sd-event used off the loop thread")
        return OpaquePointer(bitPattern: eventAddress)!
    }

    public var isOnLoopThread: Bool {
        let id = threadID.load(ordering: .acquiring)
        return id != 0 && pthread_equal(pthread_self(), pthread_t(id)) != 0
    }

    /// Runs `body` on the loop thread soon, after the work posted before it.
    public func post(_ body: @escaping @Sendable () -> Void) {
        add(.closure(body))
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        add(.job(UnownedJob(job)))
    }

    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    public func checkIsolated() {
        precondition(isOnLoopThread, "not on the event loop thread")
    }

    public func isIsolatingCurrentContext() -> Bool? { isOnLoopThread }

    /// Ends the loop thread once the work queued so far has run: for a test's own loop (the
    /// shared one runs as long as the process). Its sources must be gone; work posted later
    /// never runs.
    func stop() {
        post { [self] in sd_event_exit(event, 0) }
    }

    private func add(_ work: Work) {
        queue.withLock { queue in
            guard !queue.finished else { return }
            let wasEmpty = queue.work.isEmpty
            queue.work.append(work)
            // Work already queued has woken the loop, which takes the whole queue: one write per
            // batch. Under the lock, so the thread cannot close the eventfd meanwhile.
            if wasEmpty {
                var one: UInt64 = 1
                _ = write(wakeFD, &one, 8)
            }
        }
    }

    /// The eventfd was readable: run what is queued.
    fileprivate func runQueued() {
        var value: UInt64 = 0
        _ = read(wakeFD, &value, 8)
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

    private func run(name: String) {
        threadID.store(UInt(pthread_self()), ordering: .releasing)
        // Foundation names the current thread with pthread_setname_np (which Glibc's module hides).
        Thread.current.name = String(decoding: name.utf8.prefix(15), as: UTF8.self)
        let event = event
        // Returns only after sd_event_exit (`stop()`); an error from epoll itself ends it too.
        _ = sd_event_loop(event)
        queue.withLock { queue in
            queue.finished = true
            close(wakeFD)
        }
        sd_event_unref(event)
        threadID.store(0, ordering: .releasing)
        exited.fire()
    }
}

private func wakeHandler(_ source: OpaquePointer?, _ fd: Int32, _ revents: UInt32, _ userdata: UnsafeMutableRawPointer?) -> Int32 {
    guard let userdata else { return 0 }
    Unmanaged<EventLoop>.fromOpaque(userdata).takeUnretainedValue().runQueued()
    return 0
}
