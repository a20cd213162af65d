// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation

/// One piece of what was said, as the agent's message collector reports it: the user's words as
/// recognised, or the assistant's answer so far (cumulative: each piece holds the whole text).
public struct Transcript: Sendable, Equatable {
    public enum Role: String, Sendable {
        case user, assistant
    }

    public var role: Role
    public var text: String
    /// The segment is complete: its text will not change any more.
    public var isFinal: Bool
    /// Milliseconds (Unix epoch) the sender stamped it with; orders the pieces of one speaker.
    public var textTS: UInt64
    /// "transcribe" for speech, "raw" for JSON side data (reasoning, images, actions).
    public var dataType: String
    public var streamID: Int64?

    public init(
        role: Role, text: String, isFinal: Bool, textTS: UInt64, dataType: String = "transcribe", streamID: Int64? = nil
    ) {
        self.role = role
        self.text = text
        self.isFinal = isFinal
        self.textTS = textTS
        self.dataType = dataType
        self.streamID = streamID
    }

    /// From the collector's JSON object; nil without a known role or a text. The rest is read
    /// leniently: a missing `is_final` is false, a missing `text_ts` 0, a missing `data_type` "transcribe".
    public init?(json: AgentJSON) {
        guard let role = json["role"]?.stringValue.flatMap(Role.init(rawValue:)),
            let text = json["text"]?.stringValue
        else { return nil }
        self.role = role
        self.text = text
        isFinal = json["is_final"]?.boolValue ?? false
        textTS = json["text_ts"]?.integerValue.map { UInt64(clamping: $0) } ?? 0
        dataType = json["data_type"]?.stringValue ?? "transcribe"
        streamID = json["stream_id"]?.integerValue
    }

    /// From the collector's JSON text (UTF-8 bytes); nil when it is not a transcript.
    public init?(jsonBytes bytes: [UInt8]) {
        guard let json = try? JSONDecoder().decode(AgentJSON.self, from: Data(bytes)) else { return nil }
        self.init(json: json)
    }
}
