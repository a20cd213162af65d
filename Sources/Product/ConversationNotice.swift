// SPDX-License-Identifier: GPL-2.0-or-later
import AssistantEngine
import Glasses
import Logging

/// A question that starts a new conversation because the last one used more tokens than
/// `[assistant] conversation_token_limit`: logged, and said on the glasses in a heading line
/// above the question, so the wearer knows the answer cannot build on what came before.
public enum ConversationNotice {
    public static let glasses = "New conversation"

    /// The heading the glasses show above an answer.
    public static func heading(question: String, newConversation: Bool = false) -> String {
        (newConversation ? glasses + "\n" : "") + "> " + question
    }

    /// For `Assistant.ask`'s `onNewConversation`: logs, and redraws the heading of `stream`.
    public static func announcer(
        question: String, stream: AnswerStream?, limit: Int64, logger: Logger
    ) -> @Sendable (Int64) -> Void {
        { used in
            logger.info(
                "new conversation: the last one used more tokens than conversation_token_limit",
                metadata: ["tokens_used": "\(used)", "limit": "\(limit)"])
            stream?.heading(heading(question: question, newConversation: true))
        }
    }
}
