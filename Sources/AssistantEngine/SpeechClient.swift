// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation

/// Where and how to reach an OpenAI-compatible text-to-speech server (`POST /audio/speech`).
public struct SpeechServerConfig: Sendable {
    /// What the server is asked to send.
    public enum Format: String, Sendable {
        /// A WAV file, streamed: its rate is in its header.
        case wav
        /// OpenAI's raw PCM: s16le, mono, 24 kHz.
        case pcm
    }

    /// e.g. "https://api.openai.com/v1", or the embedded backend's espeak-ng endpoint.
    public var baseURL: String
    public var model: String
    public var voice: String
    public var format: Format
    /// 0.25...4 (1: the server's normal pace); nil: not sent.
    public var speed: Double?
    /// Held as a `Secret`, so no description of the config (or of anything holding it) shows it.
    public var apiKey: String? {
        get { key?.reveal }
        set { key = newValue.map(Secret.init) }
    }
    private var key: Secret?
    /// Bound on one text's whole exchange, retries included, up to its last audio byte.
    public var timeout: Duration

    public init(
        baseURL: String, model: String, voice: String, format: Format = .wav, speed: Double? = nil, apiKey: String?,
        timeout: Duration
    ) {
        self.baseURL = baseURL
        self.model = model
        self.voice = voice
        self.format = format
        self.speed = speed
        self.key = apiKey.map(Secret.init)
        self.timeout = timeout
    }

    /// The base URL, model and voice, for display: never the key, nor credentials or a query in the URL.
    public var publicDescription: String {
        let url = ServerURL.display(baseURL)
        return (url.isEmpty ? "" : url + " ") + "\(model) (\(voice))"
    }

    var host: String { ServerURL.host(baseURL) }
}

/// Turns a text into audio through `/audio/speech`, streamed: the audio's bytes come as the
/// server sends them. A failure before the first audio byte is retried (nothing was played);
/// after it, it is final. Callers send sentences, so a text over OpenAI's 4096 characters is
/// refused, not split.
public struct SpeechClient: Sendable {
    /// CreateSpeechRequest's `input` maxLength (characters: Unicode scalars, as the servers count).
    public static let maxInputCharacters = 4096
    public static let speeds: ClosedRange<Double> = 0.25...4

    public let config: SpeechServerConfig
    private let transport: any HTTPTransport
    private let retry: RetryPolicy
    private let sleep: @Sendable (Duration) async throws -> Void
    private let redactor: SecretRedactor

    public init(
        config: SpeechServerConfig, transport: any HTTPTransport, retry: RetryPolicy = RetryPolicy(),
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
    ) {
        self.config = config
        self.transport = transport
        self.retry = retry
        self.sleep = sleep
        self.redactor = SecretRedactor(secrets: config.apiKey.map { [$0] } ?? [])
    }

    /// Asks for `text` spoken; returns once the first audio byte is in, with the audio from there
    /// on. `.notConfigured` means this server has no speech endpoint (404/405) or the URL cannot
    /// be used: asking again will not help.
    public func speak(_ text: String) async throws(AssistantError) -> SpeechAudioStream {
        guard !text.isEmpty else { throw .invalidArgs("There is no text to speak.") }
        guard text.unicodeScalars.count <= Self.maxInputCharacters else {
            throw .invalidArgs("The text to speak is longer than \(Self.maxInputCharacters) characters.")
        }
        if let speed = config.speed, !Self.speeds.contains(speed) {
            throw .invalidArgs("The speech speed must be in 0.25...4, not \(speed).")
        }
        let body = Self.body(text, config: config)
        return try await retry.run(within: config.timeout, timedOut: timeoutError, cancelled: Self.cancelled, sleep: sleep) {
            remaining throws(AttemptFailure) in try await once(body, timeout: remaining)
        }
    }

    /// CreateSpeechRequest's JSON, members in a fixed order.
    static func body(_ text: String, config: SpeechServerConfig) -> [UInt8] {
        struct Request: Encodable {
            var model: String
            var input: String
            var voice: String
            var response_format: String
            var speed: Double?
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let request = Request(
            model: config.model, input: text, voice: config.voice, response_format: config.format.rawValue,
            speed: config.speed)
        // Strings and a finite number cannot fail to encode.
        return Array((try? encoder.encode(request)) ?? Data())
    }

    static let cancelled = AssistantError.upstreamFailed("The speech was cancelled.")

    private var timeoutError: AssistantError {
        .timeout("No speech from \(config.host) within \(config.timeout.components.seconds) s.")
    }

    private var url: String {
        let base = config.baseURL.hasSuffix("/") ? String(config.baseURL.dropLast()) : config.baseURL
        return base + "/audio/speech"
    }

    private func once(_ body: [UInt8], timeout: Duration) async throws(AttemptFailure) -> SpeechAudioStream {
        var headers: [(name: String, value: String)] = [
            ("Content-Type", "application/json"), ("Accept", config.format == .wav ? "audio/wav" : "audio/pcm"),
            ("User-Agent", "glassd"),
        ]
        if let key = config.apiKey { headers.append(("Authorization", "Bearer \(key)")) }
        let request = HTTPRequest(
            url: url, headers: headers, body: body, timeout: timeout, connectTimeout: min(timeout, .seconds(10)))
        let response: HTTPResponse
        do {
            response = try await transport.send(request)
        } catch {
            throw outcome(of: error)
        }
        guard (200..<300).contains(response.status) else {
            defer { response.cancel() }
            throw await refusal(response)
        }
        let type = (response.headers["content-type"] ?? "").lowercased()
        if type.contains("json") || type.hasPrefix("text/") {
            // An error page or JSON where audio was due: the same again if asked again.
            let bytes = (try? await collect(response.body)) ?? []
            response.cancel()
            let detail = ChatStreamDecoder.errorMessage(body: bytes).map { ": " + redactor.clean($0) } ?? ""
            throw .final(.upstreamFailed("\(config.host) sent \(Self.mediaType(type)), not audio\(detail)"))
        }
        // Read up to the first byte here: until then a failure costs nothing and is retried.
        var iterator = response.body.makeAsyncIterator()
        let first: [UInt8]
        do {
            while true {
                guard let chunk = try await iterator.next() else {
                    response.cancel()
                    if Task.isCancelled { throw AttemptFailure.final(Self.cancelled) }
                    throw AttemptFailure.final(.upstreamFailed("\(config.host) sent no audio."))
                }
                if !chunk.isEmpty {
                    first = chunk
                    break
                }
            }
        } catch let failure as AttemptFailure {
            throw failure
        } catch {
            response.cancel()
            throw outcome(of: error)
        }
        let client = self
        return SpeechAudioStream(
            first: first, body: response.body, cancel: response.cancel,
            failure: { error in
                switch client.outcome(of: error) {
                case .final(let failure), .retry(let failure, _): failure
                }
            })
    }

    /// What a status outside 2xx means; the body gives OpenAI's error message, if any.
    private func refusal(_ response: HTTPResponse) async -> AttemptFailure {
        // The status decides; a body lost on the way only loses the detail.
        let bytes = (try? await collect(response.body)) ?? []
        switch response.status {
        case 401, 403:
            let hint = config.apiKey == nil ? "needs an API key" : "refused the API key"
            return .final(.unauthorized("\(config.host) \(hint) (HTTP \(response.status))."))
        case 404, 405:
            return .final(
                .notConfigured(
                    "\(config.host) has no speech endpoint at \(ServerURL.display(url)) (HTTP \(response.status))."))
        case 429:
            if ChatStreamDecoder.errorType(body: bytes) == "insufficient_quota" {
                return .final(.rateLimited("The account at \(config.host) is out of quota."))
            }
            return .retry(
                .rateLimited("\(config.host) is rate limiting; try again later."),
                after: RetryPolicy.retryAfter(response.headers))
        default:
            let detail = ChatStreamDecoder.errorMessage(body: bytes).map { ": " + redactor.clean($0) } ?? ""
            let error = AssistantError.upstreamFailed("\(config.host) answered HTTP \(response.status)\(detail)")
            let transient = response.status >= 500 || response.status == 408 || response.status == 409
            return transient ? .retry(error, after: RetryPolicy.retryAfter(response.headers)) : .final(error)
        }
    }

    private static func mediaType(_ contentType: String) -> String {
        String(contentType.prefix { $0 != ";" }.prefix(60)).trimmingWhitespace
    }

    private func collect(_ body: AsyncThrowingStream<[UInt8], any Error>) async throws -> [UInt8] {
        var bytes: [UInt8] = []
        for try await chunk in body where bytes.count < 1 << 16 { bytes += chunk }
        return bytes
    }

    fileprivate func outcome(of error: any Error) -> AttemptFailure {
        TransportFailure(
            host: config.host, baseURL: config.baseURL, setting: "speech ",
            hint: "is the speech base_url the speech server's address and port?", redactor: redactor,
            timedOut: timeoutError, cancelled: Self.cancelled
        ).outcome(of: error)
    }
}

/// One text's audio bytes as the server sends them (WAV or raw PCM, as asked), from its first
/// byte. Read it once. A failure midway is final (`AssistantError`); cancelling the reading task,
/// or `cancel()`, ends the transfer and the reading with `.upstreamFailed("…cancelled.")`.
public struct SpeechAudioStream: AsyncSequence, Sendable {
    public typealias Element = [UInt8]
    public typealias Failure = AssistantError

    let first: [UInt8]
    let body: AsyncThrowingStream<[UInt8], any Error>
    let cancelTransfer: @Sendable () -> Void
    let failure: @Sendable (any Error) -> AssistantError

    init(
        first: [UInt8], body: AsyncThrowingStream<[UInt8], any Error>, cancel: @escaping @Sendable () -> Void,
        failure: @escaping @Sendable (any Error) -> AssistantError
    ) {
        self.first = first
        self.body = body
        self.cancelTransfer = cancel
        self.failure = failure
    }

    /// Ends the transfer (a reader that stops early).
    public func cancel() { cancelTransfer() }

    public func makeAsyncIterator() -> Iterator {
        // The first chunk was taken from this same stream; reading on continues after it.
        Iterator(first: first, body: body.makeAsyncIterator(), owner: self)
    }

    public struct Iterator: AsyncIteratorProtocol {
        public typealias Element = [UInt8]
        public typealias Failure = AssistantError

        private var first: [UInt8]?
        private var body: AsyncThrowingStream<[UInt8], any Error>.Iterator
        private let owner: SpeechAudioStream
        private var ended = false

        init(first: [UInt8], body: AsyncThrowingStream<[UInt8], any Error>.Iterator, owner: SpeechAudioStream) {
            self.first = first
            self.body = body
            self.owner = owner
        }

        public mutating func next(isolation actor: isolated (any Actor)?) async throws(AssistantError) -> [UInt8]? {
            guard !ended else { return nil }
            guard !Task.isCancelled else { throw end(SpeechClient.cancelled) }
            if let chunk = first {
                first = nil
                return chunk
            }
            do {
                while let chunk = try await body.next(isolation: actor) {
                    if !chunk.isEmpty { return chunk }
                }
            } catch {
                throw end(owner.failure(error))
            }
            // The body ends quietly when its reader is cancelled: then it is cut, not whole.
            if Task.isCancelled { throw end(SpeechClient.cancelled) }
            ended = true
            owner.cancelTransfer()
            return nil
        }

        public mutating func next() async throws(AssistantError) -> [UInt8]? {
            try await next(isolation: nil)
        }

        private mutating func end(_ error: AssistantError) -> AssistantError {
            ended = true
            owner.cancelTransfer()
            return error
        }
    }
}
