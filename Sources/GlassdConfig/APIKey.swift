// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation

/// Finds the API key: the systemd credential `api-key`, then `api_key_file`, then GLASSD_API_KEY.
/// None is fine (Ollama and most local servers need no key). The key is never logged.
public enum APIKey {
    public enum Source: String, Sendable {
        case credential = "systemd credential"
        case file = "api_key_file"
        case environment = "GLASSD_API_KEY"
    }

    public static func load(
        config: Config, environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> (key: String, source: Source)? {
        if let dir = environment["CREDENTIALS_DIRECTORY"], let key = read(dir + "/api-key") {
            return (key, .credential)
        }
        if let file = config.apiKeyFile, let key = read(file) {
            return (key, .file)
        }
        if let key = environment["GLASSD_API_KEY"].map(trim), !key.isEmpty {
            return (key, .environment)
        }
        return nil
    }

    /// The key for the speech server: `[transcription] api_key_file` if set; else the chat key when
    /// speech goes to the chat server's host; else none: the chat server's key is never sent to
    /// another host.
    public static func transcriptionKey(config: Config, chatKey: String?) -> String? {
        if let file = config.transcriptionKeyFile { return read(file) }
        guard let speech = config.transcriptionURL else { return chatKey }
        let host = { (url: String?) in url.flatMap { URL(string: $0)?.host?.lowercased() } }
        return host(speech) != nil && host(speech) == host(config.baseURL) ? chatKey : nil
    }

    /// The key for the text-to-speech server, by the same rule: `[speech_out] api_key_file` if
    /// set; else the chat key when speech goes to the chat server's host (or [speech_out] has no
    /// base_url of its own); else none.
    public static func speechOutKey(config: Config, chatKey: String?) -> String? {
        if let file = config.speechOut.apiKeyFile { return read(file) }
        guard let speech = config.speechOut.baseURL else { return chatKey }
        let host = { (url: String?) in url.flatMap { URL(string: $0)?.host?.lowercased() } }
        return host(speech) != nil && host(speech) == host(config.baseURL) ? chatKey : nil
    }

    private static func read(_ path: String) -> String? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        let key = trim(String(decoding: data, as: UTF8.self))
        return key.isEmpty ? nil : key
    }

    private static func trim(_ s: String) -> String {
        s.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
