// SPDX-License-Identifier: GPL-2.0-or-later

/// The tokens one chat request used, as the server reported them (the spec's CompletionUsage).
public struct TokenUsage: Sendable, Equatable {
    public var promptTokens: Int64
    public var completionTokens: Int64

    public init(promptTokens: Int64, completionTokens: Int64) {
        self.promptTokens = promptTokens
        self.completionTokens = completionTokens
    }

    /// Prompt and completion together (what the spec's `total_tokens` is defined as).
    public var total: Int64 { promptTokens + completionTokens }

    /// A `usage` object as decoded JSON; nil for `usage: null`, anything not an object, or an
    /// object with neither count. A count that is missing is 0 (the spec's default); one that is
    /// negative or not a whole number makes the report unusable.
    init?(json: Any?) {
        guard let object = json as? [String: Any] else { return nil }
        func count(_ key: String) -> Int64?? {
            guard let value = object[key] else { return .some(nil) }
            guard let number = value as? Int64, number >= 0 else { return nil }
            return .some(number)
        }
        guard let prompt = count("prompt_tokens"), let completion = count("completion_tokens"),
            prompt != nil || completion != nil
        else { return nil }
        self.init(promptTokens: prompt ?? 0, completionTokens: completion ?? 0)
    }
}
