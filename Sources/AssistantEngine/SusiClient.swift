// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation

/// Where and how to reach a SUSI.AI server (anonymous: it takes no key).
public struct SusiConfig: Sendable {
    /// e.g. "https://api.susi.ai" or "http://127.0.0.1:4000".
    public var baseURL: String
    /// ISO 639-1.
    public var language: String
    /// Bound on one question's total time, retries included.
    public var timeout: Duration
    /// What SUSI is told it talks to (`device_type`); some skills answer by it.
    public var deviceType: String

    public init(baseURL: String, language: String = "en", timeout: Duration, deviceType: String = "Smart Glasses") {
        self.baseURL = baseURL
        self.language = language
        self.timeout = timeout
        self.deviceType = deviceType
    }

    var host: String { ServerURL.host(baseURL) }
}

/// Asks a SUSI.AI server (`GET /susi/chat.json`) and turns its answer into typed parts, retrying
/// what is worth retrying. Errors name the host only: the URL's query is the question, which is
/// private.
public struct SusiClient: Sendable {
    /// The action types glassd performs; SUSI may still send others.
    static let actions = "answer,anchor,rss,table,map,websearch"
    /// A body is cut here (and then fails to parse): no real answer comes near it.
    static let maxAnswerBytes = 1 << 20

    public let config: SusiConfig
    private let transport: any HTTPTransport
    private let timeZone: TimeZone
    private let retry: RetryPolicy
    private let sleep: @Sendable (Duration) async throws -> Void

    public init(
        config: SusiConfig, transport: any HTTPTransport, timeZone: TimeZone = .current,
        retry: RetryPolicy = RetryPolicy(),
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
    ) {
        self.config = config
        self.transport = transport
        self.timeZone = timeZone
        self.retry = retry
        self.sleep = sleep
    }

    /// Asks SUSI; the first answer's actions, performed in order, as a typed answer, with the
    /// types of the actions that gave nothing to show (for the log).
    public func ask(_ question: String, now: Date = Date()) async throws(AssistantError) -> SusiReply {
        let question = question.trimmingWhitespace
        guard !question.isEmpty else { throw .invalidArgs("Ask SUSI something.") }
        let url = requestURL(question, now: now)
        // Transport errors may quote the URL; the question must not reach a log that way.
        let redactor = SecretRedactor(secrets: [question, question.urlQueryEncoded])
        return try await retry.run(
            within: config.timeout, timedOut: timeoutError, cancelled: .upstreamFailed("The question was cancelled."),
            sleep: sleep
        ) { remaining throws(AttemptFailure) in
            try await once(url, timeout: remaining, redactor: redactor)
        }
    }

    /// JavaScript's `getTimezoneOffset()` at `date`: minutes, UTC minus local (UTC+1 is -60).
    static func timezoneOffset(at date: Date, in timeZone: TimeZone) -> Int {
        -timeZone.secondsFromGMT(for: date) / 60
    }

    func requestURL(_ question: String, now: Date) -> String {
        let base = config.baseURL.hasSuffix("/") ? String(config.baseURL.dropLast()) : config.baseURL
        let parameters = [
            ("q", question), ("timezoneOffset", String(Self.timezoneOffset(at: now, in: timeZone))),
            ("language", config.language), ("device_type", config.deviceType), ("actions", Self.actions),
        ]
        return base + "/susi/chat.json?" + parameters.map { "\($0.0)=\($0.1.urlQueryEncoded)" }.joined(separator: "&")
    }

    private var timeoutError: AssistantError {
        .timeout("No answer from \(config.host) within \(config.timeout.components.seconds) s.")
    }

    private func once(_ url: String, timeout: Duration, redactor: SecretRedactor) async throws(AttemptFailure) -> SusiReply {
        let request = HTTPRequest(
            method: "GET", url: url, headers: [("Accept", "application/json"), ("User-Agent", "glassd")],
            timeout: timeout, connectTimeout: min(timeout, .seconds(10)))
        let response: HTTPResponse
        do {
            response = try await transport.send(request)
        } catch {
            throw outcome(of: error, redactor: redactor)
        }
        defer { response.cancel() }
        switch response.status {
        case 200..<300:
            let body = try await collect(response.body, redactor: redactor)
            do throws(SusiAnswerDecoder.DecodeError) {
                return try SusiAnswerDecoder.decode(body)
            } catch {
                // The same question gets the same answer: none of these is worth asking again.
                throw .final(failure(error, redactor: redactor))
            }
        case 429:
            throw .retry(
                .rateLimited("\(config.host) is rate limiting; try again later."),
                after: RetryPolicy.retryAfter(response.headers))
        default:
            // The body is not quoted: servers echo the request, and the question is private.
            let error = AssistantError.upstreamFailed("\(config.host) answered HTTP \(response.status).")
            let transient = response.status >= 500 || response.status == 408 || response.status == 409
            throw transient ? .retry(error, after: RetryPolicy.retryAfter(response.headers)) : .final(error)
        }
    }

    private func failure(_ error: SusiAnswerDecoder.DecodeError, redactor: SecretRedactor) -> AssistantError {
        switch error {
        case .malformed: .upstreamFailed("\(config.host) sent a malformed answer.")
        case .noAnswer: .upstreamFailed("SUSI had no answer to that.")
        case .nothingShowable(let types):
            .upstreamFailed("SUSI answered with nothing glassd can show (\(redactor.clean(types.joined(separator: ", ")))).")
        }
    }

    private func collect(
        _ body: AsyncThrowingStream<[UInt8], any Error>, redactor: SecretRedactor
    ) async throws(AttemptFailure) -> [UInt8] {
        var bytes: [UInt8] = []
        do {
            for try await chunk in body {
                bytes += chunk
                if bytes.count > Self.maxAnswerBytes { break }
            }
        } catch {
            throw outcome(of: error, redactor: redactor)
        }
        return bytes
    }

    private func outcome(of error: any Error, redactor: SecretRedactor) -> AttemptFailure {
        TransportFailure(
            host: config.host, baseURL: config.baseURL, setting: "SUSI ", hint: "is the SUSI URL right?", redactor: redactor,
            timedOut: timeoutError, cancelled: .upstreamFailed("The question was cancelled.")
        ).outcome(of: error)
    }
}
