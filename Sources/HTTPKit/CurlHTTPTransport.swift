// SPDX-License-Identifier: GPL-2.0-or-later
import CCurl
import Foundation
import GlassdCore
import Synchronization

/// HTTP over libcurl's multi interface on one dedicated thread: every transfer streams on it
/// side by side, and no blocking curl call touches the cooperative pool.
public final class CurlHTTPTransport: HTTPTransport {
    struct Submission: Sendable {
        var id: UInt64
        var request: HTTPRequest
        var head: CheckedContinuation<HTTPResponse, any Error>
        var body: AsyncThrowingStream<[UInt8], any Error>
        var bodyContinuation: AsyncThrowingStream<[UInt8], any Error>.Continuation
        var cancel: @Sendable () -> Void
    }

    private enum Command: Sendable {
        case start(Submission)
        case cancel(UInt64)
    }

    private let commands = Mutex<[Command]>([])
    private let nextID = Atomic<UInt64>(1)
    private let wakeFD: Int32

    public init() {
        curl_global_init(Int(CURL_GLOBAL_ALL))
        wakeFD = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        precondition(wakeFD >= 0, "eventfd failed")
        let thread = Thread { [self] in run() }
        thread.name = "curl"
        thread.start()
    }

    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let id = nextID.add(1, ordering: .relaxed).oldValue
        let (body, bodyContinuation) = AsyncThrowingStream.makeStream(of: [UInt8].self, throwing: (any Error).self)
        // A reader that stops early ends the transfer.
        bodyContinuation.onTermination = { [weak self] termination in
            if case .cancelled = termination { self?.submit(.cancel(id)) }
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { head in
                submit(
                    .start(
                        Submission(
                            id: id, request: request, head: head, body: body, bodyContinuation: bodyContinuation,
                            cancel: { [weak self] in self?.submit(.cancel(id)) })))
            }
        } onCancel: {
            submit(.cancel(id))
        }
    }

    private func submit(_ command: Command) {
        commands.withLock { $0.append(command) }
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
    }

    private func run() {
        guard let multi = curl_multi_init() else { fatalError("curl_multi_init failed") }
        var transfers: [UInt64: CurlTransfer] = [:]
        var cancelled = Set<UInt64>()
        var highestStarted: UInt64 = 0
        while true {
            for command in commands.withLock({ c in defer { c.removeAll() }; return c }) {
                switch command {
                case .start(let submission):
                    // A cancel can overtake its start; then the start never begins.
                    if cancelled.remove(submission.id) != nil {
                        submission.head.resume(throwing: HTTPTransportError.cancelled)
                        submission.bodyContinuation.finish(throwing: HTTPTransportError.cancelled)
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
    }
}
