// SPDX-License-Identifier: GPL-2.0-or-later

/// What a failed exchange with a server means for one attempt, the same for every client (chat,
/// transcription, speech, SUSI): a timeout or cancellation ends it, a bad URL or a server that
/// does not speak HTTP is a setting to fix, a connection that failed is worth another try. Texts
/// name the host and the setting, and never carry a secret (`redactor`).
struct TransportFailure {
    /// The server's host, as errors name it.
    var host: String
    /// The base URL as configured (shown without credentials).
    var baseURL: String
    /// Which base URL in errors: "" (the chat's), "transcription ", "speech ", "SUSI ".
    var setting: String
    /// What to check when the server did not answer in HTTP.
    var hint: String
    var redactor: SecretRedactor
    var timedOut: AssistantError
    var cancelled: AssistantError

    func outcome(of error: any Error) -> AttemptFailure {
        if error is CancellationError { return .final(cancelled) }
        switch error as? HTTPTransportError {
        case .timedOut: return .final(timedOut)
        case .cancelled: return .final(cancelled)
        case .invalidRequest(let why):
            return .final(.notConfigured("Bad \(setting)base URL \(ServerURL.display(baseURL)): \(redactor.clean(why))"))
        case .invalidResponse(let why):
            return .final(.upstreamFailed("\(host) did not answer in HTTP (\(redactor.clean(why))): \(hint)"))
        case .connectionFailed(let why):
            return .retry(.upstreamFailed("Cannot reach \(host): \(redactor.clean(why))"), after: nil)
        case .none:
            return .retry(.upstreamFailed("\(host) failed: \(redactor.clean("\(error)"))"), after: nil)
        }
    }
}
