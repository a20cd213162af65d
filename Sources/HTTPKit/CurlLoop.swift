// SPDX-License-Identifier: GPL-2.0-or-later
import AssistantEngine
import CCurl
import Concurrency
import EventLoop
import Foundation
import Synchronization

/// The curl side of one `CurlHTTPTransport`, on the process's event loop: the commands it is
/// sent, and the multi handle it drives with libcurl's multi socket API (curl says which sockets
/// and which timeout to wait for; the loop waits and calls curl_multi_socket_action). It runs
/// until its transport is released (`.close`) and no transfer is left, so a response still being
/// read outlives the transport.
actor CurlLoop {
    enum Command: Sendable {
        case start(CurlHTTPTransport.Submission)
        case cancel(UInt64)
        case close
    }

    private struct Commands {
        var queue: [Command] = []
        /// The multi handle is gone: later commands are refused.
        var finished = false
    }

    nonisolated let eventLoop: EventLoop
    private nonisolated let commands = Mutex(Commands())
    nonisolated let nextID = Atomic<UInt64>(1)
    nonisolated let exited = OneShotEvent()
    nonisolated var unownedExecutor: UnownedSerialExecutor { eventLoop.asUnownedSerialExecutor() }

    /// Made on the caller's thread, used on the loop's only.
    private let multi: UnsafeMutableRawPointer
    private var transfers: [UInt64: CurlTransfer] = [:]
    private var cancelled = Set<UInt64>()
    private var highestStarted: UInt64 = 0
    private var closing = false
    private var done = false
    /// The sockets curl asked to be watched, by descriptor.
    private var sockets: [Int32: LoopIO] = [:]
    private var timer: LoopTimer?

    /// `loop` and `makeMulti` stand in for `EventLoop.shared` and curl_multi_init, so a test can fail them.
    init(
        loop: () throws(ResourceError) -> EventLoop = EventLoop.shared,
        makeMulti: () -> UnsafeMutableRawPointer? = { curl_multi_init() }
    ) throws(ResourceError) {
        eventLoop = try loop()
        guard let multi = makeMulti() else {
            throw ResourceError(call: "curl_multi_init", purpose: "the curl transport", errno: 0)
        }
        self.multi = multi
        // Unretained: the sources the callbacks make hold this loop while curl has them.
        let me = Unmanaged.passUnretained(self).toOpaque()
        _ = ccurl_multi_setopt_socketfunction(multi, socketCallback)
        _ = ccurl_multi_setopt_ptr(multi, CURLMOPT_SOCKETDATA, me)
        _ = ccurl_multi_setopt_timerfunction(multi, timerCallback)
        _ = ccurl_multi_setopt_ptr(multi, CURLMOPT_TIMERDATA, me)
    }

    nonisolated func submit(_ command: Command) {
        let refused = commands.withLock { c -> Bool in
            guard !c.finished else { return true }
            c.queue.append(command)
            return false
        }
        // Only a cancel can come this late (a start needs the transport, which holds the loop
        // open); its transfer ended already.
        if refused {
            if case .start(let submission) = command { Self.refuse(submission) }
            return
        }
        eventLoop.post { [self] in assumeIsolated { $0.turn() } }
    }

    private static func refuse(_ submission: CurlHTTPTransport.Submission) {
        submission.head.resume(throwing: HTTPTransportError.cancelled)
        submission.bodyContinuation.finish(throwing: HTTPTransportError.cancelled)
    }

    private func turn() {
        guard !done else { return }
        for command in commands.withLock({ c in defer { c.queue.removeAll() }; return c.queue }) {
            switch command {
            case .start(let submission):
                // A cancel can overtake its start; then the start never begins.
                if cancelled.remove(submission.id) != nil {
                    Self.refuse(submission)
                    continue
                }
                highestStarted = max(highestStarted, submission.id)
                guard let transfer = CurlTransfer(submission) else { continue }
                transfers[transfer.id] = transfer
                // curl sets its timer (to now): the transfer starts when it fires.
                curl_multi_add_handle(multi, transfer.easy)
            case .cancel(let id):
                if let transfer = transfers.removeValue(forKey: id) {
                    curl_multi_remove_handle(multi, transfer.easy)
                    transfer.finish(nil)
                } else if id > highestStarted {
                    // Overtook its own start: remember it. (Otherwise it ended already.)
                    cancelled.insert(id)
                }
            case .close:
                closing = true
            }
        }
        finishIfDone()
    }

    /// curl's socket callback: watch `fd` as curl asks (`what`: CURL_POLL_*).
    fileprivate func watch(_ fd: Int32, _ what: Int32) {
        if what == CURL_POLL_REMOVE {
            sockets.removeValue(forKey: fd)?.remove()
            return
        }
        var events: IOEvents = []
        if what == CURL_POLL_IN || what == CURL_POLL_INOUT { events.insert(.readable) }
        if what == CURL_POLL_OUT || what == CURL_POLL_INOUT { events.insert(.writable) }
        if let source = sockets[fd] {
            source.events = events
            return
        }
        do {
            // Strongly: while curl has a socket, the loop holds this object.
            sockets[fd] = try LoopIO(eventLoop, fd: fd, events: events, purpose: "a curl socket") { [self] revents in
                ready(fd, revents)
            }
        } catch {
            failAll(error)
        }
    }

    /// curl's timer callback: call it back in `milliseconds` (-1: not at all).
    fileprivate func setTimer(_ milliseconds: Int) {
        guard milliseconds >= 0 else {
            timer?.cancel()
            return
        }
        // Strongly, as the sockets.
        let timer = timer ?? LoopTimer(eventLoop, purpose: "curl's timeout") { [self] in ready(ccurl_socket_timeout(), []) }
        self.timer = timer
        do {
            try timer.schedule(after: .milliseconds(milliseconds))
        } catch {
            failAll(error)
        }
    }

    /// The loop cannot wait for what curl asks (no memory, no timerfd): every transfer fails
    /// rather than wait for ever. Not from within curl's callback, which must not change the
    /// multi handle: next, on the loop.
    private func failAll(_ error: ResourceError) {
        eventLoop.post { [self] in
            assumeIsolated { loop in
                for (_, transfer) in loop.transfers {
                    curl_multi_remove_handle(loop.multi, transfer.easy)
                    transfer.fail(.connectionFailed(error.description))
                }
                loop.transfers.removeAll()
                loop.finishIfDone()
            }
        }
    }

    /// A socket of curl's is ready, or (CURL_SOCKET_TIMEOUT) its timer fired.
    private func ready(_ fd: Int32, _ revents: IOEvents) {
        guard !done else { return }
        var flags: Int32 = 0
        if !revents.isDisjoint(with: [.readable, .hangUp]) { flags |= CURL_CSELECT_IN }
        if revents.contains(.writable) { flags |= CURL_CSELECT_OUT }
        if revents.contains(.error) { flags |= CURL_CSELECT_ERR }
        var running: Int32 = 0
        curl_multi_socket_action(multi, fd, flags, &running)
        var left: Int32 = 0
        while let message = curl_multi_info_read(multi, &left) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
            let code = message.pointee.data.result
            var privateData: UnsafeMutableRawPointer?
            _ = ccurl_getinfo_ptr(easy, CURLINFO_PRIVATE, &privateData)
            curl_multi_remove_handle(multi, easy)
            guard let privateData else { continue }
            let transfer = Unmanaged<CurlTransfer>.fromOpaque(privateData).takeUnretainedValue()
            transfers.removeValue(forKey: transfer.id)
            transfer.finish(code)
        }
        finishIfDone()
    }

    /// Once the transport is gone and its last transfer ended: the multi handle goes, with the
    /// sockets and the timer.
    private func finishIfDone() {
        guard closing && transfers.isEmpty && !done else { return }
        done = true
        let late = commands.withLock { c in
            c.finished = true
            defer { c.queue.removeAll() }
            return c.queue
        }
        for case .start(let submission) in late { Self.refuse(submission) }
        // Closes curl's cached connections (telling the socket callback to let them go).
        curl_multi_cleanup(multi)
        for source in sockets.values { source.remove() }
        sockets.removeAll()
        timer?.cancel()
        timer = nil
        exited.fire()
    }
}

/// Called by curl on the loop thread, inside the calls the loop makes.
private let socketCallback: curl_socket_callback = { _, fd, what, userp, _ in
    guard let userp else { return 0 }
    Unmanaged<CurlLoop>.fromOpaque(userp).takeUnretainedValue().assumeIsolated { $0.watch(fd, what) }
    return 0
}

private let timerCallback: curl_multi_timer_callback = { _, milliseconds, userp in
    guard let userp else { return 0 }
    Unmanaged<CurlLoop>.fromOpaque(userp).takeUnretainedValue().assumeIsolated { $0.setTimer(milliseconds) }
    return 0
}
