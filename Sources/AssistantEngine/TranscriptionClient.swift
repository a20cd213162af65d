// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation

/// Where and how to reach an OpenAI-compatible speech-to-text server.
public struct TranscriptionConfig: Sendable {
    /// e.g. "https://api.openai.com/v1", or a whisper.cpp server started with
    /// `--inference-path /v1/audio/transcriptions` at "http://localhost:8080/v1".
    public var baseURL: String
    /// e.g. "whisper-1"; whisper.cpp ignores it.
    public var model: String
    /// Held as a `Secret`, so no description of the config (or of anything holding it) shows it.
    public var apiKey: String? {
        get { key?.reveal }
        set { key = newValue.map(Secret.init) }
    }
    private var key: Secret?
    /// Bound on one recording's total time, retries included.
    public var timeout: Duration
    /// ISO-639-1 code of the spoken language (transcriptions only: translations have no such field).
    public var language: String?

    public init(baseURL: String, model: String, apiKey: String?, timeout: Duration, language: String? = nil) {
        self.baseURL = baseURL
        self.model = model
        self.key = apiKey.map(Secret.init)
        self.timeout = timeout
        self.language = language
    }

    /// The base URL and model, for display: never the key, nor credentials or a query in the URL.
    public var publicDescription: String {
        let url = ServerURL.display(baseURL)
        return url.isEmpty ? model : "\(url) \(model)"
    }

    var host: String { ServerURL.host(baseURL) }
}

/// Which audio endpoint: same-language text, or English text.
public enum TranscriptionTask: String, Sendable {
    case transcribe = "transcriptions"
    case translate = "translations"
}

/// Turns a WAV recording into text through `/audio/transcriptions` or `/audio/translations`,
/// retrying what is worth retrying. The reply is a whole body, so any failure may be retried
/// until the deadline: nothing was shown yet.
public struct TranscriptionClient: Sendable {
    /// OpenAI's limit on an audio upload; a server would refuse more after we sent it all.
    public static let maxAudioBytes = 25 * 1024 * 1024

    public let config: TranscriptionConfig
    private let transport: any HTTPTransport
    private let retry: RetryPolicy
    private let sleep: @Sendable (Duration) async throws -> Void
    private let redactor: SecretRedactor

    public init(
        config: TranscriptionConfig, transport: any HTTPTransport, retry: RetryPolicy = RetryPolicy(),
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
    ) {
        self.config = config
        self.transport = transport
        self.retry = retry
        self.sleep = sleep
        self.redactor = SecretRedactor(secrets: config.apiKey.map { [$0] } ?? [])
    }

    /// The same client trying each recording once, within `timeout`: for a guess made while the
    /// wearer may still speak (a failure only means the usual request at the end), which must not
    /// hold up that request behind retries.
    public func once(within timeout: Duration) -> TranscriptionClient {
        var config = config
        config.timeout = min(timeout, config.timeout)
        return TranscriptionClient(config: config, transport: transport, retry: RetryPolicy(maxAttempts: 1), sleep: sleep)
    }

    /// POSTs `wav` as `audio.wav` and returns the text with whitespace trimmed and runs of it
    /// collapsed to one space (whisper.cpp starts segments with a space and ends them with "\n").
    public func transcribe(wav: [UInt8], task: TranscriptionTask) async throws(AssistantError) -> String {
        guard !wav.isEmpty else { throw .invalidArgs("No audio was recorded.") }
        guard wav.count <= Self.maxAudioBytes else { throw .invalidArgs("The recording is longer than 25 MiB.") }
        let body = Self.body(wav: wav, task: task, config: config)
        return try await retry.run(within: config.timeout, timedOut: timeoutError, cancelled: Self.cancelled, sleep: sleep) {
            remaining throws(AttemptFailure) in try await once(body, task: task, timeout: remaining)
        }
    }

    /// The multipart fields of CreateTranscriptionRequest / CreateTranslationRequest that we use.
    static func body(wav: [UInt8], task: TranscriptionTask, config: TranscriptionConfig) -> MultipartBody {
        var parts: [MultipartBody.Part] = [
            .field(name: "model", value: config.model), .field(name: "response_format", value: "json"),
        ]
        if task == .transcribe, let language = config.language, !language.isEmpty {
            parts.append(.field(name: "language", value: language))
        }
        parts.append(.file(name: "file", filename: "audio.wav", contentType: "audio/wav", bytes: wav))
        return MultipartBody(parts)
    }

    private static let cancelled = AssistantError.upstreamFailed("The transcription was cancelled.")

    private var timeoutError: AssistantError {
        .timeout("No transcription from \(config.host) within \(config.timeout.components.seconds) s.")
    }

    private func url(_ task: TranscriptionTask) -> String {
        let base = config.baseURL.hasSuffix("/") ? String(config.baseURL.dropLast()) : config.baseURL
        return base + "/audio/" + task.rawValue
    }

    private func once(_ body: MultipartBody, task: TranscriptionTask, timeout: Duration) async throws(AttemptFailure)
        -> String
    {
        var headers: [(name: String, value: String)] = [
            ("Content-Type", body.contentType), ("Accept", "application/json"), ("User-Agent", "glassd"),
        ]
        if let key = config.apiKey { headers.append(("Authorization", "Bearer \(key)")) }
        let request = HTTPRequest(
            url: url(task), headers: headers, body: body.bytes, timeout: timeout,
            connectTimeout: min(timeout, .seconds(10)))
        let response: HTTPResponse
        do {
            response = try await transport.send(request)
        } catch {
            throw outcome(of: error)
        }
        defer { response.cancel() }
        guard !(200..<300).contains(response.status) else {
            let bytes = try await collect(response.body)
            return try text(of: bytes, contentType: response.headers["content-type"] ?? "")
        }
        // The status decides; a body lost on the way only loses the detail.
        let bytes = (try? await collect(response.body)) ?? []
        switch response.status {
        case 401, 403:
            let hint = config.apiKey == nil ? "needs an API key" : "refused the API key"
            throw .final(.unauthorized("\(config.host) \(hint) (HTTP \(response.status))."))
        case 404:
            let what = task == .transcribe ? "transcription" : "translation"
            throw .final(
                .notConfigured(
                    "\(config.host) has no \(what) endpoint at \(ServerURL.display(url(task))). "
                        + "For whisper.cpp (its default path is /inference), start whisper-server with "
                        + "--inference-path /v1/audio/\(task.rawValue)."))
        case 429:
            if ChatStreamDecoder.errorType(body: bytes) == "insufficient_quota" {
                throw .final(.rateLimited("The account at \(config.host) is out of quota."))
            }
            throw .retry(
                .rateLimited("\(config.host) is rate limiting; try again later."),
                after: RetryPolicy.retryAfter(response.headers))
        default:
            let detail = ChatStreamDecoder.errorMessage(body: bytes).map { ": " + redactor.clean($0) } ?? ""
            let error = AssistantError.upstreamFailed("\(config.host) answered HTTP \(response.status)\(detail)")
            let transient = response.status >= 500 || response.status == 408 || response.status == 409
            throw transient ? .retry(error, after: RetryPolicy.retryAfter(response.headers)) : .final(error)
        }
    }

    /// `{"text": ...}` JSON, or a `text/plain` body as the text itself. Anything else (an HTML
    /// page from a wrong URL, say) would come back the same if asked again, so it is final.
    private func text(of body: [UInt8], contentType: String) throws(AttemptFailure) -> String {
        let type = contentType.lowercased()
        let plain = type.isEmpty || type.hasPrefix("text/plain")
        // Some servers label JSON as text/plain; a transcript hardly ever starts with "{".
        let looksJSON = body.first(where: { !Self.isSpace($0) }) == UInt8(ascii: "{")
        if type.contains("json") || (plain && looksJSON) {
            if let message = ChatStreamDecoder.errorMessage(body: body) {
                throw .final(.upstreamFailed("\(config.host) failed: \(redactor.clean(message))"))
            }
            guard let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any],
                let text = object["text"] as? String
            else { throw .final(.upstreamFailed("\(config.host) sent a malformed transcription.")) }
            return Self.normalized(text)
        }
        if plain {
            return Self.normalized(String(decoding: body, as: UTF8.self))
        }
        throw .final(.upstreamFailed("\(config.host) sent \(Self.mediaType(type)), not a transcription."))
    }

    /// Trimmed, whitespace runs as one space, NUL dropped (it cannot travel on D-Bus).
    static func normalized(_ text: String) -> String {
        ChatStreamDecoder.sanitized(text).split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }

    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    private static func mediaType(_ contentType: String) -> String {
        String(contentType.prefix { $0 != ";" }.prefix(60)).trimmingWhitespace
    }

    private func collect(_ body: AsyncThrowingStream<[UInt8], any Error>) async throws(AttemptFailure) -> [UInt8] {
        var bytes: [UInt8] = []
        do {
            for try await chunk in body where bytes.count < 1 << 20 { bytes += chunk }
        } catch {
            throw outcome(of: error)
        }
        return bytes
    }

    private func outcome(of error: any Error) -> AttemptFailure {
        TransportFailure(
            host: config.host, baseURL: config.baseURL, setting: "transcription ",
            hint: "is the transcription base_url the speech server's address and port?", redactor: redactor,
            timedOut: timeoutError, cancelled: Self.cancelled
        ).outcome(of: error)
    }
}
