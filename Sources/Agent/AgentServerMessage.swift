// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation

/// What a message from the agent's websocket_server extension means to glassd.
public enum AgentInbound: Sendable, Equatable {
    case transcript(Transcript)
    /// Synthesised speech: s16le PCM as sent.
    case audio(pcm: [UInt8], sampleRate: Int, channels: Int)
    case error(String)
    case command(String)
    /// Not for glassd, or not understood: why, for the debug log.
    case ignored(String)
}

/// Reads the websocket_server extension's text frames. Never fails: anything it does not
/// understand becomes `.ignored` with the reason.
public enum AgentServerMessage {
    /// An error text is cut here: it is shown on the glasses and logged.
    static let maxErrorLength = 300

    /// What `text` means: one item, or none while a chunked transcript still waits for parts.
    public static func decode<C: Clock>(_ text: String, chunks: inout TranscriptChunks<C>, at now: C.Instant)
        -> [AgentInbound] where C.Duration == Duration
    {
        guard let message = json(Array(text.utf8)), case .object = message else {
            return [.ignored("not a JSON object")]
        }
        switch message["type"]?.stringValue {
        case "data": return data(message, chunks: &chunks, at: now)
        case "audio": return [audio(message)]
        case "error": return [.error(errorText(message["error"]))]
        case "cmd":
            guard let name = message["name"]?.stringValue else { return [.ignored("a command without a name")] }
            return [.command(name)]
        case let type?: return [.ignored("a message of type \(type.prefix(40))")]
        case nil: return [.ignored("a message without a type")]
        }
    }

    private static func data<C: Clock>(_ message: AgentJSON, chunks: inout TranscriptChunks<C>, at now: C.Instant)
        -> [AgentInbound] where C.Duration == Duration
    {
        let name = message["name"]?.stringValue ?? ""
        guard name == "text_data" else { return [.ignored("data named \"\(name.prefix(40))\"")] }
        switch message["data"] {
        case .object(let fields)?:
            return [transcript(.object(fields))]
        case .string(let text)?:
            // Either the collector's JSON as text, or one chunk of it.
            if let json = json(Array(text.utf8)), case .object = json { return [transcript(json)] }
            guard text.contains("|") else { return [.ignored("text_data that is neither JSON nor a chunk")] }
            let before = chunks.dropped
            guard let bytes = chunks.add(text, at: now) else {
                return chunks.dropped > before ? [.ignored("a malformed transcript chunk")] : []
            }
            guard let json = json(bytes) else { return [.ignored("a chunked transcript that is not JSON")] }
            return [transcript(json)]
        default:
            return [.ignored("text_data without data")]
        }
    }

    private static func transcript(_ json: AgentJSON) -> AgentInbound {
        Transcript(json: json).map { .transcript($0) } ?? .ignored("text_data without a role or text")
    }

    private static func audio(_ message: AgentJSON) -> AgentInbound {
        guard let encoded = message["audio"]?.stringValue, let pcm = Data(base64Encoded: encoded) else {
            return .ignored("audio that is not base64")
        }
        let metadata = message["metadata"]
        let bytesPerSample = metadata?["bytes_per_sample"]?.integerValue ?? 2
        guard bytesPerSample == 2 else { return .ignored("audio of \(bytesPerSample) bytes per sample") }
        // 16 kHz mono is what the TEN graphs send when they do not say.
        let rate = metadata?["sample_rate"]?.integerValue ?? 16_000
        let channels = metadata?["channels"]?.integerValue ?? 1
        guard (1...384_000).contains(rate), (1...8).contains(channels) else {
            return .ignored("audio at \(rate) Hz in \(channels) channels")
        }
        return .audio(pcm: Array(pcm), sampleRate: Int(rate), channels: Int(channels))
    }

    /// The error as a sentence: its text, or an object's message, or the JSON as sent.
    private static func errorText(_ error: AgentJSON?) -> String {
        let text: String
        switch error {
        case .string(let s)?: text = s
        case let value? where value["message"]?.stringValue != nil: text = value["message"]?.stringValue ?? ""
        case let value?: text = (try? JSONEncoder().encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? ""
        case nil: text = ""
        }
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return trimmed.isEmpty ? "The agent reported an error." : String(trimmed.prefix(maxErrorLength))
    }

    private static func json(_ bytes: [UInt8]) -> AgentJSON? {
        try? JSONDecoder().decode(AgentJSON.self, from: Data(bytes))
    }
}
