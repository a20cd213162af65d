// SPDX-License-Identifier: GPL-2.0-or-later
import AnswerModel
import Foundation

/// Where and how to reach an OpenAI-compatible chat server.
public struct ChatServerConfig: Sendable {
    /// e.g. "https://api.openai.com/v1" or "http://localhost:11434/v1".
    public var baseURL: String
    public var model: String
    /// Held as a `Secret`, so no description of the config (or of anything holding it) shows it.
    public var apiKey: String? {
        get { key?.reveal }
        set { key = newValue.map(Secret.init) }
    }
    private var key: Secret?
    /// Bound on one question's total time, retries included.
    public var timeout: Duration
    /// Offer the `show_answer` tool, so the model can answer in a typed form (ShowAnswerTool).
    public var showAnswerTool: Bool

    public init(baseURL: String, model: String, apiKey: String?, timeout: Duration, showAnswerTool: Bool = false) {
        self.baseURL = baseURL
        self.model = model
        self.key = apiKey.map(Secret.init)
        self.timeout = timeout
        self.showAnswerTool = showAnswerTool
    }

    /// The base URL and model, for display: never the key, nor credentials or a query in the URL.
    public var publicDescription: String {
        let url = ServerURL.display(baseURL)
        return url.isEmpty ? model : "\(url) \(model)"
    }

    var host: String { ServerURL.host(baseURL) }
}

/// A server URL as people see it in messages and logs.
enum ServerURL {
    /// Without credentials, query or fragment (they may hold secrets); "" if unparseable.
    static func display(_ url: String) -> String {
        guard var parts = URLComponents(string: url) else { return "" }
        parts.user = nil
        parts.password = nil
        parts.query = nil
        parts.fragment = nil
        return parts.string ?? ""
    }

    static func host(_ url: String) -> String { URL(string: url)?.host ?? url }
}

/// A whole answer and the tokens its request used (nil when the server did not say).
public struct ChatCompletion: Sendable, Equatable {
    /// With a typed answer: the streamed text (if any), then the typed parts' text form.
    public var text: String
    public var usage: TokenUsage?
    /// Set when the model called `show_answer` with parts that decode: the streamed text (if
    /// any) as a first text part, then the call's parts.
    public var typed: TypedAnswer?

    public init(text: String, usage: TokenUsage?, typed: TypedAnswer? = nil) {
        self.text = text
        self.usage = usage
        self.typed = typed
    }
}

/// Streams one chat completion from an OpenAI-compatible server, retrying what is worth retrying.
public struct OpenAIChatClient: Sendable {
    /// An answer is cut here: nothing sensible is longer, and memory stays bounded.
    static let maxAnswerBytes = 64 * 1024

    public let config: ChatServerConfig
    private let transport: any HTTPTransport
    private let retry: RetryPolicy
    private let sleep: @Sendable (Duration) async throws -> Void
    private let redactor: SecretRedactor
    private let streamOptions = StreamOptionsSupport()
    private let toolSupport = ShowAnswerToolSupport()

    public init(
        config: ChatServerConfig, transport: any HTTPTransport, retry: RetryPolicy = RetryPolicy(),
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
    ) {
        self.config = config
        self.transport = transport
        self.retry = retry
        self.sleep = sleep
        self.redactor = SecretRedactor(secrets: config.apiKey.map { [$0] } ?? [])
    }

    /// Sends `messages` to `model` (the configured one by default; a vision model for a photo),
    /// calls `onDelta` for each piece of the answer as it arrives, returns the whole answer.
    public func complete(
        _ messages: [ChatMessage], model: String? = nil, onDelta: @Sendable (String) async -> Void
    ) async throws(AssistantError) -> String {
        try await completion(messages, model: model) { await onDelta($0.text) }.text
    }

    /// As `complete`, with the tokens the request used when the server reports them (it is asked
    /// to with `stream_options`; one that ignores the option reports nothing), and each piece
    /// saying whether it is a typed answer's text form.
    public func completion(
        _ messages: [ChatMessage], model: String? = nil, onPiece: @Sendable (AnswerPiece) async -> Void
    ) async throws(AssistantError) -> ChatCompletion {
        // Encoded once: a retry sends the same bytes, and a photo makes them worth not redoing
        // (again only if the server refuses stream_options).
        let model = model ?? config.model
        var askUsage = streamOptions.accepted
        var askTool = config.showAnswerTool && toolSupport.accepted
        var body = ChatRequestBody.encode(
            model: model, messages: messages, includeUsage: askUsage, showAnswerTool: askTool)
        return try await retry.run(
            within: config.timeout, timedOut: timeoutError, cancelled: .upstreamFailed("The question was cancelled."),
            sleep: sleep
        ) { remaining throws(AttemptFailure) in
            if (askUsage && !streamOptions.accepted) || (askTool && !toolSupport.accepted) {
                askUsage = askUsage && streamOptions.accepted
                askTool = askTool && toolSupport.accepted
                body = ChatRequestBody.encode(
                    model: model, messages: messages, includeUsage: askUsage, showAnswerTool: askTool)
            }
            var emitted = false
            do throws(AttemptFailure) {
                return try await once(
                    body, asked: (usage: askUsage, tool: askTool), timeout: remaining, emitted: &emitted,
                    onPiece: onPiece)
            } catch {
                // Text already shown cannot be taken back, so a stream that broke midway is final.
                if emitted, case .retry(let failure, _) = error { throw .final(failure) }
                throw error
            }
        }
    }

    private var timeoutError: AssistantError {
        .timeout("No answer from \(config.host) within \(config.timeout.components.seconds) s.")
    }

    private func once(
        _ body: [UInt8], asked: (usage: Bool, tool: Bool), timeout: Duration, emitted: inout Bool,
        onPiece: @Sendable (AnswerPiece) async -> Void
    ) async throws(AttemptFailure) -> ChatCompletion {
        let response: HTTPResponse
        do {
            response = try await transport.send(request(body, timeout: timeout))
        } catch {
            throw outcome(of: error, emitted: false)
        }
        // Whatever happens below, this exchange is over when we leave (a retry makes its own).
        defer { response.cancel() }
        switch response.status {
        case 200..<300:
            let type = response.headers["content-type"] ?? ""
            if type.contains("application/json") {
                let body = try await collect(response.body, emitted: false)
                do {
                    var usage: TokenUsage?
                    var calls = ChatToolCalls()
                    let content = try ChatStreamDecoder.decode(completion: body, usage: &usage, toolCalls: &calls)
                    let (answer, typed, added, addedParts) = Self.withTypedAnswer(content, calls, offered: asked.tool)
                    guard !answer.isEmpty else { throw ChatStreamDecoder.DecodeError.malformed }
                    emitted = true
                    if let typed {
                        if !content.isEmpty { await onPiece(.text(content)) }
                        if !added.isEmpty { await onPiece(.textForm(added, of: addedParts)) }
                    } else {
                        await onPiece(.text(answer))
                    }
                    return ChatCompletion(text: answer, usage: usage, typed: typed)
                } catch {
                    throw decodeAttemptFailure(error, emitted: false)
                }
            }
            return try await stream(response.body, offeredTool: asked.tool, emitted: &emitted, onPiece: onPiece)
        case 401, 403:
            _ = try? await collect(response.body, emitted: false)
            let hint = config.apiKey == nil ? "needs an API key" : "refused the API key"
            throw .final(.unauthorized("\(config.host) \(hint) (HTTP \(response.status))."))
        case 429:
            let body = (try? await collect(response.body, emitted: false)) ?? []
            if ChatStreamDecoder.errorType(body: body) == "insufficient_quota" {
                throw .final(.rateLimited("The account at \(config.host) is out of quota."))
            }
            throw .retry(
                .rateLimited("\(config.host) is rate limiting; try again later."),
                after: RetryPolicy.retryAfter(response.headers))
        default:
            let body = (try? await collect(response.body, emitted: false)) ?? []
            let detail = ChatStreamDecoder.errorMessage(body: body).map { ": " + redactor.clean($0) } ?? ""
            let error = AssistantError.upstreamFailed("\(config.host) answered HTTP \(response.status)\(detail)")
            if asked.usage && StreamOptionsSupport.isRefusal(status: response.status, body: body) {
                // Nothing was shown yet: at once again, without it (the next attempt sees this).
                streamOptions.markRefused()
                throw .retry(error, after: .zero)
            }
            if asked.tool && ShowAnswerToolSupport.isRefusal(status: response.status, body: body) {
                toolSupport.markRefused()
                throw .retry(error, after: .zero)
            }
            let transient = response.status >= 500 || response.status == 408 || response.status == 409
            throw transient ? .retry(error, after: RetryPolicy.retryAfter(response.headers)) : .final(error)
        }
    }

    private func stream(
        _ body: AsyncThrowingStream<[UInt8], any Error>, offeredTool: Bool, emitted: inout Bool,
        onPiece: @Sendable (AnswerPiece) async -> Void
    ) async throws(AttemptFailure) -> ChatCompletion {
        var parser = SSEParser()
        var answer = ""
        var usage: TokenUsage?
        var calls = ChatToolCalls()
        do {
            reading: for try await chunk in body {
                for event in try parser.feed(chunk) {
                    switch try ChatStreamDecoder.decode(event, usage: &usage, toolCalls: &calls) {
                    case .text(let piece):
                        guard answer.utf8.count < Self.maxAnswerBytes else { break reading }
                        answer += piece
                        emitted = true
                        await onPiece(.text(piece))
                    case .done: break reading
                    case .nothing: continue
                    }
                }
            }
            if let last = try parser.finish(),
                case .text(let piece) = try ChatStreamDecoder.decode(last, usage: &usage, toolCalls: &calls)
            {
                answer += piece
                emitted = true
                await onPiece(.text(piece))
            }
        } catch let error as ChatStreamDecoder.DecodeError {
            throw decodeAttemptFailure(error, emitted: emitted)
        } catch let error as SSEParser.Failure {
            throw decodeAttemptFailure(error, emitted: emitted)
        } catch {
            throw outcome(of: error, emitted: emitted)
        }
        let (text, typed, added, addedParts) = Self.withTypedAnswer(answer, calls, offered: offeredTool)
        guard !text.isEmpty else {
            throw .retry(.upstreamFailed("\(config.host) sent an empty answer."), after: nil)
        }
        if let typed, !added.isEmpty {
            // The content went out piece by piece; the typed answer's text form follows it once.
            emitted = true
            await onPiece(.textForm(added, of: addedParts))
        }
        return ChatCompletion(text: text, usage: usage, typed: typed)
    }

    /// The answer once its calls are whole: with a `show_answer` call that decodes, the content
    /// then the parts' text form (`added` is what follows the content), the typed answer, and
    /// its parts `added` is the text form of.
    /// Any other call, or arguments that do not decode, leave the content as the answer.
    static func withTypedAnswer(
        _ content: String, _ calls: ChatToolCalls, offered: Bool
    ) -> (text: String, typed: TypedAnswer?, added: String, addedParts: TypedAnswer) {
        guard offered,
            let parts = calls.calls.lazy.filter({ $0.name == ShowAnswerTool.name })
                .compactMap({ ShowAnswerTool.answer(arguments: $0.arguments) }).first
        else { return (content, nil, "", TypedAnswer([])) }
        let lead = content.trimmingCharacters(in: .whitespacesAndNewlines)
        let separator = lead.isEmpty || content.hasSuffix("\n") ? "" : "\n"
        let added = separator + parts.textForm
        let typed = TypedAnswer((lead.isEmpty ? [] : [.text(lead)]) + parts.parts)
        return (content + added, typed, added, parts)
    }

    private func collect(
        _ body: AsyncThrowingStream<[UInt8], any Error>, emitted: Bool
    ) async throws(AttemptFailure) -> [UInt8] {
        var bytes: [UInt8] = []
        do {
            for try await chunk in body where bytes.count < 1 << 20 { bytes += chunk }
        } catch {
            throw outcome(of: error, emitted: emitted)
        }
        return bytes
    }

    private func decodeAttemptFailure(_ error: any Error, emitted: Bool) -> AttemptFailure {
        let failure: AssistantError =
            if case .upstream(let message) = error as? ChatStreamDecoder.DecodeError {
                .upstreamFailed("\(config.host) failed: \(redactor.clean(message))")
            } else if case .tooManyToolCalls(let count) = error as? ChatStreamDecoder.DecodeError {
                .upstreamFailed("\(config.host) sent more than \(count - 1) tool calls in one answer.")
            } else if let error = error as? SSEParser.Failure {
                .upstreamFailed("\(config.host) sent a malformed stream: \(error.message).")
            } else {
                .upstreamFailed("\(config.host) sent a malformed answer.")
            }
        return emitted ? .final(failure) : .retry(failure, after: nil)
    }

    /// Once part of the answer went out, nothing is retried (it would be sent twice).
    private func outcome(of error: any Error, emitted: Bool) -> AttemptFailure {
        let outcome = TransportFailure(
            host: config.host, baseURL: config.baseURL, setting: "",
            hint: "is base_url the chat server's address and port?", redactor: redactor, timedOut: timeoutError,
            cancelled: .upstreamFailed("The question was cancelled.")
        ).outcome(of: error)
        guard emitted, case .retry(let failure, _) = outcome else { return outcome }
        return .final(failure)
    }

    private func request(_ body: [UInt8], timeout: Duration) -> HTTPRequest {
        var headers: [(name: String, value: String)] = [
            ("Content-Type", "application/json"), ("Accept", "text/event-stream"), ("User-Agent", "glassd"),
        ]
        if let key = config.apiKey { headers.append(("Authorization", "Bearer \(key)")) }
        let base = config.baseURL.hasSuffix("/") ? String(config.baseURL.dropLast()) : config.baseURL
        return HTTPRequest(
            url: base + "/chat/completions", headers: headers,
            body: body, timeout: timeout,
            connectTimeout: min(timeout, .seconds(10)))
    }
}
