// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation

/// Why a query failed, in words for the person who asked. Never carries an API key.
public enum AssistantError: Error, Sendable, Equatable {
    case invalidArgs(String)
    case notConfigured(String)
    case unauthorized(String)
    case rateLimited(String)
    case upstreamFailed(String)
    case timeout(String)
    /// Our own fault (storage): nothing the caller did.
    case internalFailure(String)

    public var message: String {
        switch self {
        case .invalidArgs(let m), .notConfigured(let m), .unauthorized(let m), .rateLimited(let m),
            .upstreamFailed(let m), .timeout(let m), .internalFailure(let m):
            m
        }
    }
}

/// Keeps secrets out of text that came from elsewhere (upstream error bodies, transport errors).
public struct SecretRedactor: Sendable {
    private let secrets: [Secret]

    public init(secrets: [String]) {
        self.secrets = secrets.filter { $0.count >= 4 }.map(Secret.init)
    }

    /// Removes every known secret and anything shaped like an OpenAI key ("sk-…", even masked),
    /// then shortens to `limit` characters.
    public func clean(_ text: String, limit: Int = 200) -> String {
        var out = text
        for secret in secrets { out = out.replacingOccurrences(of: secret.reveal, with: "[redacted]") }
        out = out.split(separator: " ", omittingEmptySubsequences: false).map { word in
            word.contains("sk-") ? "[redacted]" : String(word)
        }.joined(separator: " ")
        out = out.trimmingCharacters(in: .whitespacesAndNewlines)
        if out.count > limit { out = String(out.prefix(limit - 1)) + "…" }
        return out
    }
}
