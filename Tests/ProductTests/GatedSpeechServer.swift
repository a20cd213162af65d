// SPDX-License-Identifier: GPL-2.0-or-later
import AssistantEngine
import Concurrency
import Logging
import Synchronization

/// An OpenAI-compatible server in memory whose transcriptions wait until the test releases them,
/// in the order they came: the test decides when each eager transcript is back. Chat answers
/// `answer` in one piece.
final class GatedSpeechServer: HTTPTransport {
    enum Reply: Sendable {
        case text(String)
        case status(Int)
    }

    struct State {
        /// Transcription requests that came, by URL path end ("transcriptions", "translations").
        var arrived: [String] = []
        var released = 0
        /// Requests whose sender gave up (cancelled) before they were released.
        var cancelled = 0
    }

    /// The reply to each transcription request in turn; the last one for any after.
    let replies: [Reply]
    let answer: String
    let state = Mutex(State())
    let changed = Pulse()

    init(replies: [Reply], answer: String = "Paris.") {
        self.replies = replies
        self.answer = answer
    }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        guard let task = ["transcriptions", "translations"].first(where: { request.url.hasSuffix("/audio/" + $0) }) else {
            return Self.response(200, "text/event-stream", #"data: {"choices":[{"index":0,"delta":{"content":"\#(answer)"}}]}"# + "\n\ndata: [DONE]\n\n")
        }
        let number = state.withLock {
            $0.arrived.append(task)
            return $0.arrived.count
        }
        changed.pulse()
        while true {
            let ticket = changed.ticket()
            if state.withLock({ $0.released >= number }) { break }
            if Task.isCancelled {
                state.withLock { $0.cancelled += 1 }
                changed.pulse()
                throw CancellationError()
            }
            await changed.wait(after: ticket)
        }
        switch replies[min(number, replies.count) - 1] {
        case .text(let text): return Self.response(200, "application/json", #"{"text": "\#(text)"}"#)
        case .status(let status): return Self.response(status, "application/json", #"{"error": {"message": "no"}}"#)
        }
    }

    /// Lets the next transcription request (in arrival order, or one still to come) have its reply.
    func release() {
        state.withLock { $0.released += 1 }
        changed.pulse()
    }

    /// Waits until `done` holds of the state, or the test is cancelled (its time limit).
    func wait(until done: (State) -> Bool) async {
        while !Task.isCancelled {
            let ticket = changed.ticket()
            if state.withLock({ done($0) }) { return }
            await changed.wait(after: ticket)
        }
    }

    private static func response(_ status: Int, _ type: String, _ body: String) -> HTTPResponse {
        let (stream, sink) = AsyncThrowingStream.makeStream(of: [UInt8].self)
        sink.yield(Array(body.utf8))
        sink.finish()
        return HTTPResponse(status: status, headers: ["content-type": type], body: stream)
    }
}

/// Log messages kept, for a test that waits for a decision the product only logs.
final class CapturedLog: Sendable {
    let messages = Mutex<[String]>([])
    let changed = Pulse()

    var logger: Logger {
        var logger = Logger(label: "test") { _ in Handler(log: self) }
        logger.logLevel = .debug
        return logger
    }

    /// Waits until `count` messages starting with `prefix` were logged, or the test is cancelled.
    func wait(for prefix: String, count: Int = 1) async {
        while !Task.isCancelled {
            let ticket = changed.ticket()
            if messages.withLock({ $0.filter { $0.hasPrefix(prefix) }.count }) >= count { return }
            await changed.wait(after: ticket)
        }
    }

    struct Handler: LogHandler {
        let log: CapturedLog
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .debug

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let all = metadata.merging(event.metadata ?? [:]) { $1 }
            let extra = all.sorted { $0.key < $1.key }.map { " \($0.key)=\($0.value)" }.joined()
            log.messages.withLock { $0.append("\(event.message)\(extra)") }
            log.changed.pulse()
        }
    }
}
