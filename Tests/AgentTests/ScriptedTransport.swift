// SPDX-License-Identifier: GPL-2.0-or-later
import AssistantEngine
import Synchronization

/// Answers requests from a script of canned replies and records what it was sent.
final class ScriptedTransport: HTTPTransport {
    struct Canned: Sendable {
        var status: Int
        var body: String
        /// Thrown by send() when `status` is 0, else at the end of the body.
        var failure: HTTPTransportError? = nil
    }

    private let script: Mutex<[Canned]>
    let requests = Mutex<[HTTPRequest]>([])

    init(_ script: [Canned]) {
        self.script = Mutex(script)
    }

    convenience init(status: Int = 200, _ body: String) {
        self.init([Canned(status: status, body: body)])
    }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        requests.withLock { $0.append(request) }
        let next = script.withLock { $0.isEmpty ? nil : $0.removeFirst() }
        guard let next else { throw HTTPTransportError.connectionFailed("script exhausted") }
        if let failure = next.failure, next.status == 0 { throw failure }
        let (body, continuation) = AsyncThrowingStream.makeStream(of: [UInt8].self, throwing: (any Error).self)
        // Two pieces: a reply read as one chunk would hide a reader that keeps only the last.
        let bytes = Array(next.body.utf8)
        continuation.yield(Array(bytes.prefix(bytes.count / 2)))
        continuation.yield(Array(bytes.dropFirst(bytes.count / 2)))
        if let failure = next.failure { continuation.finish(throwing: failure) } else { continuation.finish() }
        return HTTPResponse(status: next.status, headers: ["content-type": "application/json"], body: body)
    }

    var last: HTTPRequest? { requests.withLock { $0.last } }
    var lastBody: String { String(decoding: last?.body ?? [], as: UTF8.self) }
}
