// SPDX-License-Identifier: GPL-2.0-or-later
import AssistantEngine
import CCurl
import Concurrency
import Foundation
import Synchronization

/// HTTP over libcurl's multi socket interface on the process's event loop: every transfer streams
/// on it side by side, and no blocking curl call touches the cooperative pool.
public final class CurlHTTPTransport: HTTPTransport {
    struct Submission: Sendable {
        var id: UInt64
        var request: HTTPRequest
        var head: CheckedContinuation<HTTPResponse, any Error>
        var body: AsyncThrowingStream<[UInt8], any Error>
        var bodyContinuation: AsyncThrowingStream<[UInt8], any Error>.Continuation
        var cancel: @Sendable () -> Void
    }

    private let loop: CurlLoop
    /// Fired when the transport's curl handle is gone from the loop (after the transport was
    /// released and its last transfer finished).
    var exited: OneShotEvent { loop.exited }

    /// Throws ResourceError when the system has no descriptor or curl no handle to spare.
    public convenience init() throws(ResourceError) {
        curl_global_init(Int(CURL_GLOBAL_ALL))
        try self.init(loop: CurlLoop())
    }

    /// The loop never holds the transport: releasing the transport ends the loop's part.
    init(loop: CurlLoop) {
        self.loop = loop
    }

    deinit { loop.submit(.close) }

    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let id = loop.nextID.add(1, ordering: .relaxed).oldValue
        let loop = loop
        let (body, bodyContinuation) = AsyncThrowingStream.makeStream(of: [UInt8].self, throwing: (any Error).self)
        // A reader that stops early ends the transfer.
        bodyContinuation.onTermination = { termination in
            if case .cancelled = termination { loop.submit(.cancel(id)) }
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { head in
                loop.submit(
                    .start(
                        Submission(
                            id: id, request: request, head: head, body: body, bodyContinuation: bodyContinuation,
                            cancel: { loop.submit(.cancel(id)) })))
            }
        } onCancel: {
            loop.submit(.cancel(id))
        }
    }
}
