// SPDX-License-Identifier: GPL-2.0-or-later
import AssistantEngine
import CCurl
import Concurrency
import Foundation
import Synchronization

/// The curl thread of one `CurlHTTPTransport`: the commands it is sent and the multi handle it
/// drives. It runs until its transport is released (`.close`) and no transfer is left, so a
/// response still being read outlives the transport, and a transport nobody holds ends its thread.
final class CurlLoop: Sendable {
    enum Command: Sendable {
        case start(CurlHTTPTransport.Submission)
        case cancel(UInt64)
        case close
    }

    private struct Commands {
        var queue: [Command] = []
        /// The thread has ended and closed its eventfd.
        var finished = false
    }

    private let commands = Mutex(Commands())
    let nextID = Atomic<UInt64>(1)
    private let wakeFD: Int32
    /// The multi handle, made here so a failure is the caller's error; `run()` takes it on the
    /// thread, the only one that uses it.
    private let multiHandle: Mutex<UnsafeMutableRawPointer?>
    let exited = OneShotEvent()

    /// `makeWakeFD` and `makeMulti` stand in for eventfd(2) and curl_multi_init, so a test can fail them.
    init(
        makeWakeFD: () -> Int32 = { eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK)) },
        makeMulti: () -> UnsafeMutableRawPointer? = { curl_multi_init() }
    ) throws(ResourceError) {
        let fd = makeWakeFD()
        guard fd >= 0 else { throw ResourceError(call: "eventfd", purpose: "the curl thread's wake-up", errno: errno) }
        guard let multi = makeMulti() else {
            close(fd)
            throw ResourceError(call: "curl_multi_init", purpose: "the curl thread", errno: 0)
        }
        wakeFD = fd
        multiHandle = Mutex(multi)
    }

    func submit(_ command: Command) {
        let refused = commands.withLock { c -> Bool in
            guard !c.finished else { return true }
            c.queue.append(command)
            // Under the lock, so the thread cannot have closed the eventfd meanwhile.
            var one: UInt64 = 1
            _ = write(wakeFD, &one, 8)
            return false
        }
        // Only a cancel can come this late (a start needs the transport, which holds the loop
        // open); its transfer ended already.
        if refused, case .start(let submission) = command { Self.refuse(submission) }
    }

    private static func refuse(_ submission: CurlHTTPTransport.Submission) {
        submission.head.resume(throwing: HTTPTransportError.cancelled)
        submission.bodyContinuation.finish(throwing: HTTPTransportError.cancelled)
    }

    func run() {
        // Taken once: `run()` is called once, by the thread the transport starts.
        guard let multi = multiHandle.withLock({ $0.take() }) else { return }
        var transfers: [UInt64: CurlTransfer] = [:]
        var cancelled = Set<UInt64>()
        var highestStarted: UInt64 = 0
        var closing = false
        while true {
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
            var running: Int32 = 0
            curl_multi_perform(multi, &running)
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
            if closing && transfers.isEmpty { break }
            var wake = curl_waitfd(fd: wakeFD, events: Int16(CURL_WAIT_POLLIN), revents: 0)
            if transfers.isEmpty {
                // Idle: sleep until a request arrives, with no periodic wake-ups.
                var fd = pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0)
                _ = poll(&fd, 1, -1)
                wake.revents = fd.revents
            } else {
                var ready: Int32 = 0
                curl_multi_poll(multi, &wake, 1, 1000, &ready)
            }
            if wake.revents != 0 {
                var value: UInt64 = 0
                _ = read(wakeFD, &value, 8)
            }
        }
        let late = commands.withLock { c in
            c.finished = true
            close(wakeFD)
            defer { c.queue.removeAll() }
            return c.queue
        }
        for case .start(let submission) in late { Self.refuse(submission) }
        curl_multi_cleanup(multi)
        exited.fire()
    }
}
