// SPDX-License-Identifier: GPL-2.0-or-later

/// One message of a conversation as sent to a chat model.
public struct ChatMessage: Sendable, Equatable {
    public enum Role: String, Sendable {
        case system, user, assistant
    }

    public var role: Role
    public var content: String
    /// A photo sent with the text (a user message to a vision model); never stored.
    public var imageJPEG: [UInt8]?

    public init(_ role: Role, _ content: String) {
        self.init(role, content, imageJPEG: nil)
    }

    public init(_ role: Role, _ content: String, imageJPEG: [UInt8]?) {
        self.role = role
        self.content = content
        self.imageJPEG = imageJPEG
    }
}

/// A stored message, as the history returns it.
public struct StoredMessage: Sendable, Equatable {
    /// Unix time in milliseconds.
    public var createdAt: Int64
    public var queryID: String
    public var role: ChatMessage.Role
    public var text: String

    public init(createdAt: Int64, queryID: String, role: ChatMessage.Role, text: String) {
        self.createdAt = createdAt
        self.queryID = queryID
        self.role = role
        self.text = text
    }
}
